"""Pinned robots.txt files (``ROBOTRULES_PINNED``): the SHA-256 an operator approved per site.

An operator who read and approved a site's robots.txt names it by the
SHA-256 of its body (as audit lines name files). While the live file is
another one (or none: a 404 or a refusal has no body, so it differs from
every pin), the crawl layer holds the site as it holds an unreachable one
(SPEC 8). Keys are an origin (``https://example.com:8443``), which names
that origin only, or a host (``example.com``), which names its origins on
any scheme and port; an origin's own key wins over its host's.

SPEC 8 (what is fetched decides only when it is the approved file).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from scrapy_robotrules.engine import bounded

__all__ = ["SETTING", "PinError", "Pins", "parse_pins"]

SETTING = "ROBOTRULES_PINNED"
MAX_PINS = 100_000
_SHA256 = re.compile(r"[0-9a-fA-F]{64}\Z")
_ORIGIN = re.compile(r"(https?)://([^/?#@\s]+)\Z", re.IGNORECASE)
_HOST = re.compile(r"[^/?#@:\s\[\]]+\Z|\[[0-9a-fA-F:.]+\]\Z")
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
        """The SHA-256 (lower-case hex) pinned for ``origin`` (``scheme://host[:port]``), if any."""
        pins = self._pins
        found = pins.get(origin.lower())
        if found is not None:
            return found
        host = origin.partition("://")[2].lower()
        if host.startswith("["):
            return pins.get(host[: host.find("]") + 1])
        return pins.get(host.partition(":")[0].rstrip("."))


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise PinError(
            f"{SETTING}: a key must be a host or an origin, not {bounded.shown(key, _SHOWN)}"
        )
    origin = _ORIGIN.match(key)
    if origin is not None:
        scheme, authority = origin.groups()
        return f"{scheme.lower()}://{authority.lower().rstrip('.')}"
    if _HOST.match(key) is None:
        raise PinError(
            f"{SETTING}: {bounded.shown(key, _SHOWN)} is neither a host (example.com)"
            " nor an origin (https://example.com)"
        )
    return key.lower().rstrip(".")


def parse_pins(value: object) -> Pins:
    """``ROBOTRULES_PINNED`` read and checked: a mapping, a JSON object (``-s``), or None."""
    value = bounded.setting_mapping(
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
                f"{SETTING}[{bounded.shown(key, _SHOWN)}] must be a SHA-256 in hex (64 characters),"
                f" not {bounded.shown(sha, _SHOWN)}"
            )
        if site in pins:
            raise PinError(f"{SETTING} names {bounded.shown(site, _SHOWN)} twice")
        pins[site] = sha.lower()
    return Pins(pins)
