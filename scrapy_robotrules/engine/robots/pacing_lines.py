"""Values of the non-rule members: ``Crawl-delay``, ``Request-rate``, ``Visit-time`` (SPEC 6).

Invalid values are ignored rather than guessed at: a politeness directive
that cannot be read is not a reason to crawl faster or slower than asked.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import NamedTuple

__all__ = ["RequestRate", "UtcWindow", "parse_crawl_delay", "parse_request_rate", "parse_window"]

# A float written with ASCII digits; float() alone would also take "nan",
# "1_0" and non-ASCII digits.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WINDOW = re.compile(r"([0-9]{2})([0-9]{2})[ \t]*-[ \t]*([0-9]{2})([0-9]{2})")
_RATE = re.compile(
    r"([0-9]+)[ \t]*/[ \t]*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)?[ \t]*([smhd]?)(?:[ \t]+(\S.*))?",
    re.IGNORECASE | re.ASCII,
)
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class UtcWindow(NamedTuple):
    """A daily window of UTC time, ``start`` to ``end``; it may wrap past midnight."""

    start: dt.time
    end: dt.time

    def __contains__(self, moment: object) -> bool:
        if isinstance(moment, dt.datetime):
            if moment.tzinfo is not None:  # naive datetimes are taken as UTC
                moment = moment.astimezone(dt.timezone.utc)
            moment = moment.time().replace(tzinfo=None)
        if not isinstance(moment, dt.time):
            return False
        if self.start <= self.end:
            return self.start <= moment <= self.end
        return moment >= self.start or moment <= self.end

    def __str__(self) -> str:
        return f"{self.start:%H%M}-{self.end:%H%M} UTC"


class RequestRate(NamedTuple):
    """``requests`` per ``seconds``, optionally only within ``window``."""

    requests: int
    seconds: float
    window: UtcWindow | None

    @property
    def delay(self) -> float:
        """Seconds between two requests that keeps to the rate."""
        return self.seconds / self.requests


def parse_crawl_delay(value: str) -> float | None:
    """Seconds, or ``None`` unless a finite number >= 0."""
    if _NUMBER.fullmatch(value) is None:
        return None
    seconds = float(value)
    if not 0 <= seconds < float("inf"):
        return None
    return abs(seconds)  # "-0" is 0


def parse_window(value: str) -> UtcWindow | None:
    """``hhmm-hhmm`` as a :class:`UtcWindow`, or ``None``."""
    match = _WINDOW.fullmatch(value.strip())
    if match is None:
        return None
    h1, m1, h2, m2 = (int(part) for part in match.groups())
    if h1 > 23 or h2 > 23 or m1 > 59 or m2 > 59:
        return None
    return UtcWindow(dt.time(h1, m1), dt.time(h2, m2))


def parse_request_rate(value: str) -> RequestRate | None:
    """``n/m[s|m|h|d] [hhmm-hhmm]``, or ``None`` when invalid or zero."""
    match = _RATE.fullmatch(value.strip())
    if match is None:
        return None
    requests_text, amount, unit, window_text = match.groups()
    if amount is None and not unit:
        return None
    requests = int(requests_text)
    seconds = float(amount or "1") * _UNIT_SECONDS[unit.lower()]
    if requests <= 0 or seconds <= 0:
        return None
    window = None
    if window_text is not None:
        window = parse_window(window_text)
        if window is None:
            return None
    return RequestRate(requests, seconds, window)
