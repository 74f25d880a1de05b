"""What a robots.txt fetch means: the one place that maps an HTTP outcome to rules (SPEC 8).

No I/O here: the crawl layer fetches, these functions decide. RFC 9309 §2.3
and §2.4: success -> the file's rules; client errors -> no robots.txt, all
allowed; server errors, 429 and network errors -> *unreachable*, everything
disallowed for now and fetched again later. An error never means "allow all".
"""

from __future__ import annotations

import email.utils
import enum
import re
import time
from collections.abc import Mapping

__all__ = [
    "DEFAULT_MAX_AGE",
    "DEFAULT_MIN_AGE",
    "MAX_REDIRECTS",
    "Outcome",
    "freshness_lifetime",
    "outcome_for_status",
    "retry_delay",
]

MAX_REDIRECTS = 5
DEFAULT_MAX_AGE = 86_400.0
# A floor, so ``Cache-Control: max-age=0`` cannot make a crawler fetch
# robots.txt again before every request.
DEFAULT_MIN_AGE = 60.0
UNAUTHORIZED_CHOICES = ("allow", "disallow")


class Outcome(str, enum.Enum):
    """What a fetch of robots.txt leaves the crawler with."""

    RULES = "rules"
    """The file was fetched: its rules decide."""
    ALLOW_ALL = "allow-all"
    """There is no robots.txt (4xx, or too many redirects): everything is allowed."""
    DISALLOW_ALL = "disallow-all"
    """401/403 with ``unauthorized="disallow"``: the site is off limits."""
    UNREACHABLE = "unreachable"
    """429, 5xx or a network error: disallowed for now, fetched again later."""

    def __str__(self) -> str:
        return self.value


def outcome_for_status(status: int, *, unauthorized: str = "allow") -> Outcome:
    """The outcome of a final (redirects already followed) HTTP status.

    A 3xx that is still a 3xx here means the redirect limit was passed:
    treated as 404 (SPEC 8). Statuses outside 100-599, and 1xx, are not
    HTTP answers a crawler can act on: unreachable, the safe side.
    """
    if unauthorized not in UNAUTHORIZED_CHOICES:
        choices = ", ".join(repr(c) for c in UNAUTHORIZED_CHOICES)
        raise ValueError(f"unauthorized must be one of {choices}, not {unauthorized!r}")
    if 200 <= status < 300:
        return Outcome.RULES
    if 300 <= status < 400:
        return Outcome.ALLOW_ALL
    if status in (401, 403):
        return Outcome.DISALLOW_ALL if unauthorized == "disallow" else Outcome.ALLOW_ALL
    if 400 <= status < 500 and status != 429:
        return Outcome.ALLOW_ALL
    return Outcome.UNREACHABLE


_MAX_AGE = re.compile(r"\s*(s-maxage|max-age)\s*=\s*\"?([0-9]+)\"?\s*", re.IGNORECASE)
_NO_CACHE = re.compile(r"\s*(?:no-cache|no-store)\s*(?:=.*)?", re.IGNORECASE)


def freshness_lifetime(
    headers: Mapping[str, str],
    *,
    max_age: float = DEFAULT_MAX_AGE,
    min_age: float = DEFAULT_MIN_AGE,
    now: float | None = None,
) -> float:
    """Seconds a fetched robots.txt stays fresh, from ``Cache-Control`` / ``Expires``.

    ``headers`` keys are matched case-insensitively. ``max-age`` (else
    ``s-maxage``) wins over ``Expires``; ``no-cache``/``no-store`` mean 0;
    an ``Expires`` that is not a date means already expired (RFC 9111 §5.3);
    an unreadable ``Cache-Control`` directive is ignored. Without any, the
    file is fresh for ``max_age``. The result is clamped to
    ``[min_age, max_age]`` (RFC 9309 §2.4 caps it at 24 hours).
    """
    lower = {key.lower(): value for key, value in headers.items()}
    lifetime: float | None = None
    cache_control = lower.get("cache-control")
    if cache_control is not None:
        ages: dict[str, float] = {}
        for directive in cache_control.split(","):
            match = _MAX_AGE.fullmatch(directive)
            if match is not None:
                ages.setdefault(match.group(1).lower(), float(match.group(2)))
            elif _NO_CACHE.fullmatch(directive):
                ages["no-cache"] = 0.0
        # A crawler is no shared cache: max-age speaks to it before s-maxage.
        for name in ("no-cache", "max-age", "s-maxage"):
            if name in ages:
                lifetime = ages[name]
                break
    if lifetime is None and "expires" in lower:
        lifetime = _expires_lifetime(lower["expires"], lower.get("date"), now)
    if lifetime is None:
        lifetime = max_age
    age = lower.get("age", "").strip()
    if age.isdigit():
        lifetime -= int(age)
    return min(max(lifetime, min_age), max_age)


def _expires_lifetime(expires: str, date: str | None, now: float | None) -> float:
    expires_at = _http_date(expires)
    if expires_at is None:
        return 0.0
    reference = _http_date(date) if date is not None else None
    if reference is None:
        reference = time.time() if now is None else now
    return expires_at - reference


def _http_date(value: str) -> float | None:
    try:
        parsed = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed.tzinfo is None:
        return None
    try:
        return parsed.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def retry_delay(attempt: int, *, base: float = 5.0, cap: float = 600.0) -> float:
    """Seconds before fetching an unreachable robots.txt again: doubling, capped.

    ``attempt`` counts failures so far, from 1.
    """
    if attempt <= 1:
        return min(base, cap)
    return min(base * 2.0 ** min(attempt - 1, 64), cap)
