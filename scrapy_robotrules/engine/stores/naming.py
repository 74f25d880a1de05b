"""How a store is named: ``ROBOTRULES_STORE`` values, and showing them without secrets.

The values are those docs/reference/settings.rst describes.
"""

from __future__ import annotations

import re
from contextlib import suppress
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["REDACTED", "REDIS_SCHEMES", "STORE_SCHEMES", "redact_url", "sqlite_path", "store_kind"]

STORE_SCHEMES = (
    "memory",
    "sqlite",
    "redis",
    "rediss",
    "unix",
    "redis+cluster",
    "rediss+cluster",
    "redis+sentinel",
    "rediss+sentinel",
)

REDIS_SCHEMES = STORE_SCHEMES[2:]
"""A Redis server (``redis``, ``rediss``, ``unix``), a Redis Cluster or a Sentinel group."""

REDACTED = "***"

_CREDENTIAL_PARAMETER = re.compile(r"pass|secret|token|auth|credential|user", re.IGNORECASE)
"""Query parameters that carry (part of) a credential: ``password=``, ``username=``..."""
_SECRET_PARAMETER = re.compile(r"pass|secret|token|auth|credential", re.IGNORECASE)


def redact_url(url: str, text: str | None = None) -> str:
    """``text`` (by default ``url`` itself) with every credential of ``url`` shown as ``***``.

    The one way a store URL is shown: log lines, stats and exception
    messages go through it. The userinfo (``user:pass@``) is replaced
    whole, credential query parameters (``?password=``) keep only their
    name, and a password is replaced wherever else it appears (a driver's
    error message may quote it).
    """
    secrets: set[str] = set()
    shown = url
    scheme, slashes, rest = url.partition("://")
    if slashes:
        ends = [i for i in map(rest.find, "/?#") if i >= 0]
        authority = rest[: min(ends, default=len(rest))]
        if "@" in authority:
            userinfo, _, host = authority.rpartition("@")
            secrets.add(userinfo.partition(":")[2])
            shown = f"{scheme}://{REDACTED}@{host}{rest[len(authority) :]}"
    head, question, tail = shown.partition("?")
    if question:
        query, hash_, fragment = tail.partition("#")
        parameters = []
        for parameter in query.split("&"):
            name, equals, value = parameter.partition("=")
            if equals and _CREDENTIAL_PARAMETER.search(name):
                if _SECRET_PARAMETER.search(name):
                    secrets.add(value)
                value = REDACTED
            parameters.append(f"{name}{equals}{value}")
        shown = f"{head}?{'&'.join(parameters)}{hash_}{fragment}"
    with suppress(ValueError):  # what a driver parsing the URL would take as secrets
        parts = urlsplit(url)
        secrets.add(parts.password or "")
        secrets.update(v for n, v in parse_qsl(parts.query) if _SECRET_PARAMETER.search(n))
    secrets |= {unquote(secret) for secret in secrets}
    secrets.discard("")
    text = shown if text is None else text.replace(url, shown)
    # Longest first, so that no part of a longer secret is left behind.
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def store_kind(url: str) -> str:
    """``memory``, ``sqlite`` or ``redis`` (any Redis topology) for a ``ROBOTRULES_STORE`` value.

    ``ValueError`` for anything else.
    """
    if url == "memory":
        return "memory"
    scheme = urlsplit(url).scheme.lower()
    if scheme == "sqlite" and sqlite_path(url):
        return "sqlite"
    if scheme in REDIS_SCHEMES:
        return "redis"
    raise ValueError(
        f"not a store: {redact_url(url)!r}; use 'memory', 'sqlite:///absolute/path.db',"
        " 'sqlite:relative/path.db', 'redis://host:port/db',"
        " 'redis+cluster://host:port[,host:port...]'"
        " or 'redis+sentinel://host:port[,host:port...]/SERVICE[/db]'"
    )


def sqlite_path(url: str) -> str:
    """The file of a ``sqlite:`` URL: ``sqlite:///abs/robots.db`` or ``sqlite:robots.db``."""
    parts = urlsplit(url)
    if parts.netloc:
        return ""  # sqlite://host/... names no file
    return parts.path
