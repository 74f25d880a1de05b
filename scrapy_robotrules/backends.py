"""Stores that outlive a process: what they keep, what they must do, and how one is named.

A backend keeps *records*: the raw robots.txt bytes of an origin and how
its fetch ended, never parsed objects (parsing is fast, and bytes mean the
same to every agent and every version of this package). Besides records, a
backend shared by several processes coordinates them:

- a *lease* per origin, so that one process fetches a robots.txt while the
  others wait for its record;
- a *pace* per origin, the next time the fleet may send that origin a
  request, so that Crawl-delay holds for all processes together.

Backends raise :class:`StoreError` when they cannot answer; the caller
(:class:`~scrapy_robotrules.cached_store.CachedStore`) falls back to memory.
"""

from __future__ import annotations

import re
from contextlib import suppress
from typing import NamedTuple, Protocol
from urllib.parse import parse_qsl, unquote, urlsplit

from .fetch_policy import Outcome

__all__ = [
    "STORE_SCHEMES",
    "Backend",
    "Record",
    "StoreError",
    "open_backend",
    "redact_url",
    "store_kind",
]

KEEP_STALE = 7 * 86_400.0
"""Seconds a record is kept after it went stale: stale rules still decide while
they are fetched again (SPEC 8), and a restarted crawl starts from them."""

STORE_SCHEMES = ("memory", "sqlite", "redis", "rediss", "unix")


class StoreError(Exception):
    """A backend could not answer (down, unreachable, locked, corrupt)."""


class Record(NamedTuple):
    """One origin's robots.txt as a backend keeps it.

    ``body`` is the file that decides: the one just fetched, or for an
    unreachable origin the last one fetched before (``None`` if none).
    """

    origin: str
    outcome: Outcome
    body: bytes | None
    status: int | None
    url: str | None
    fetched_at: float
    fresh_until: float


class Backend(Protocol):
    """What :class:`~scrapy_robotrules.cached_store.CachedStore` needs of a backend.

    Every method may raise :class:`StoreError`.
    """

    name: str
    """How the backend is named in log lines (no password)."""

    def load(self, origin: str) -> Record | None: ...

    def save(self, record: Record) -> None: ...

    def delete(self, origin: str) -> None: ...

    def lease(self, origin: str, owner: str, seconds: float) -> bool:
        """Take (or renew) the lease on fetching ``origin``; ``False`` if another owner has it."""
        ...

    def release(self, origin: str, owner: str) -> None:
        """Give the lease up, if ``owner`` still holds it."""
        ...

    def reserve(self, origin: str, interval: float) -> float:
        """Book the origin's next turn, ``interval`` seconds after the last one booked.

        Returns the seconds to wait before the booked turn, 0 if it is now.
        """
        ...

    def eviction(self) -> str | None:
        """Why records, leases and paces may vanish before they expire, as one phrase for a
        log line (a Redis server that evicts keys under ``maxmemory``); ``None`` if they stay.
        """
        ...

    def close(self) -> None: ...


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
    """``memory``, ``sqlite`` or ``redis`` for a ``ROBOTRULES_STORE`` value, else ``ValueError``."""
    if url == "memory":
        return "memory"
    scheme = urlsplit(url).scheme.lower()
    if scheme == "sqlite" and sqlite_path(url):
        return "sqlite"
    if scheme in ("redis", "rediss", "unix"):
        return "redis"
    raise ValueError(
        f"not a store: {redact_url(url)!r}; use 'memory', 'sqlite:///absolute/path.db',"
        " 'sqlite:relative/path.db' or 'redis://host:port/db'"
    )


def sqlite_path(url: str) -> str:
    """The file of a ``sqlite:`` URL: ``sqlite:///abs/robots.db`` or ``sqlite:robots.db``."""
    parts = urlsplit(url)
    if parts.netloc:
        return ""  # sqlite://host/... names no file
    return parts.path


def open_backend(url: str, *, timeout: float = 1.0) -> Backend:
    """The backend a ``sqlite:`` or ``redis:`` URL names; ``timeout`` bounds each call.

    Opening does not contact a server: an unreachable one shows up as
    :class:`StoreError` on first use, when the caller can fall back.
    """
    kind = store_kind(url)
    if kind == "sqlite":
        from .sqlite_backend import SQLiteBackend

        return SQLiteBackend(sqlite_path(url), timeout=timeout)
    if kind == "redis":
        from .redis_backend import RedisBackend

        return RedisBackend(url, timeout=timeout)
    raise ValueError("the memory store has no backend")
