"""Pinned robots.txt files (``ROBOTRULES_PINNED``): the SHA-256 an operator approved per site.

An operator who read and approved a site's robots.txt names it by the
SHA-256 of its body (as audit lines name files). While the live file is
another one (or none: a 404 or a refusal has no body, so it differs from
every pin), the crawl layer holds the site as it holds an unreachable one
(SPEC 8). Keys are an origin (``https://example.com:8443``), which names
that origin only, or a host (``example.com``), which names its origins on
any scheme and port; an origin's own key wins over its host's.

A key names origins as the crawl does (``engine.robots.urls.origin_of``,
the one function that turns a request's URL into its origin): case, a
default port (``:80``, ``:080``) and a non-ASCII host (in its IDNA form)
fold alike in a key and in a URL, so that the two always meet. A final dot
is folded on both sides too (``example.com.`` is the host ``example.com``,
as DNS reads it): a pin for one holds the other. A key that names no origin
(a port past 65535, a wildcard, a host no DNS name can be, credentials) is
refused, named without its password.

SPEC 8 (what is fetched decides only when it is the approved file).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from scrapy_robotrules.engine import untrusted
from scrapy_robotrules.engine.robots.urls import origin_of
from scrapy_robotrules.engine.stores.naming import REDACTED, redact_url

__all__ = ["SETTING", "PinError", "Pins", "parse_pins"]

SETTING = "ROBOTRULES_PINNED"
MAX_PINS = 100_000
_SHA256 = re.compile(r"[0-9a-fA-F]{64}\Z")
_ORIGIN = re.compile(r"https?://[^/?#\s]+\Z", re.IGNORECASE)
_HOST = re.compile(r"[^/?#@:\s\[\]]+\Z|\[[0-9a-fA-F:.]+\]\Z")
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\Z")
"""A label of a host name (underscores too: the crawl requests such hosts)."""
_MAX_HOST = 253
_SHOWN = 80


class PinError(ValueError):
    """``ROBOTRULES_PINNED`` is no dict of sites to SHA-256 values; the message says why."""


class Pins:
    """The pins of a crawl, found by origin (an origin's key, else its host's)."""

    def __init__(self, pins: Mapping[str, str] | None = None) -> None:
        self._pins = dict(pins or {})
        self.any = bool(self._pins)

    def __len__(self) -> int:
        return len(self._pins)

    def for_origin(self, origin: str) -> str | None:
        """The SHA-256 (lower-case hex) pinned for ``origin`` (``scheme://host[:port]``), if any.

        ``origin`` as :func:`~scrapy_robotrules.engine.robots.urls.origin_of` gives it.
        """
        pins = self._pins
        scheme, host, port = _parts(origin.lower())
        host = host.rstrip(".")
        found = pins.get(f"{scheme}://{host}{port}")
        return found if found is not None else pins.get(host)


def _parts(origin: str) -> tuple[str, str, str]:
    """Scheme, host and ``:port`` (maybe empty) of an origin ``origin_of`` gave."""
    scheme, _, authority = origin.partition("://")
    if authority.startswith("["):
        end = authority.find("]") + 1
        return scheme, authority[:end], authority[end:]
    host, colon, port = authority.partition(":")
    return scheme, host, colon + port


def _key(key: object) -> str:
    """The origin or host ``key`` names, as the crawl names it; :class:`PinError` if none."""
    if not isinstance(key, str):
        raise PinError(
            f"{SETTING}: a key must be a host or an origin, not {untrusted.shown(key, _SHOWN)}"
        )
    if "@" in key:
        raise PinError(
            f"{SETTING}: {_shown(key)} names credentials;"
            " a key is a host (example.com) or an origin (https://example.com)"
        )
    if _ORIGIN.match(key) is not None:
        scheme, host, port = _parts(_origin(key, key))
        return f"{scheme}://{_host(host, key)}{port}"
    if _HOST.match(key) is None:
        raise PinError(
            f"{SETTING}: {_shown(key)} is neither a host (example.com)"
            " nor an origin (https://example.com)"
        )
    return _host(_parts(_origin(f"http://{key}", key))[1], key)


def _origin(url: str, key: str) -> str:
    """``origin_of(url)``, the crawl's own naming; why not, as a :class:`PinError`."""
    try:
        return origin_of(url)
    except ValueError as exc:
        why = str(exc).rpartition(": ")[2]
        raise PinError(f"{SETTING}: {_shown(key)} names no origin ({why})") from None


def _host(host: str, key: str) -> str:
    """``host`` without its final dot, when a DNS name (or an IP address) can be it."""
    if host.startswith("["):
        return host
    host = host.rstrip(".")
    if len(host) > _MAX_HOST:
        why = f"a host name of {len(host)} characters, at most {_MAX_HOST}"
    elif not all(_LABEL.match(label) for label in host.split(".")):
        why = "a host name is labels of letters, digits, '-' and '_', at most 63 each"
    else:
        return host
    raise PinError(f"{SETTING}: {_shown(key)} names no origin ({why})")


def _shown(key: str) -> str:
    """``key`` as an error shows it: bounded, its credentials masked as store URLs' are."""
    if "://" not in key and "@" in key:  # a host key's userinfo, masked whole as a URL's is
        return untrusted.shown(f"{REDACTED}@{key.rpartition('@')[2]}", _SHOWN)
    return untrusted.shown(redact_url(key), _SHOWN)


def parse_pins(value: object) -> Pins:
    """``ROBOTRULES_PINNED`` read and checked: a mapping, a JSON object (``-s``), or None."""
    value = untrusted.setting_mapping(
        value,
        setting=SETTING,
        error=PinError,
        expected="a dict of sites to SHA-256 values",
        expected_in_full="a dict of sites to SHA-256 values",
        entries="sites",
        max_entries=MAX_PINS,
        max_depth=2,
        max_digits=20,
        limit=_SHOWN,
    )
    pins: dict[str, str] = {}
    for key, sha in value.items():
        site = _key(key)
        if not isinstance(sha, str) or _SHA256.match(sha) is None:
            raise PinError(
                f"{SETTING}[{untrusted.shown(key, _SHOWN)}] must be a SHA-256 in hex"
                f" (64 characters), not {untrusted.shown(sha, _SHOWN)}"
            )
        if site in pins:
            raise PinError(f"{SETTING} names {untrusted.shown(site, _SHOWN)} twice")
        pins[site] = sha.lower()
    return Pins(pins)
