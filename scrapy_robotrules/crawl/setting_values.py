"""Reading one setting's value: numbers, durations, choices, lists, the store URL.

Each reader returns the value in the type the crawl layer uses, or raises
:class:`RobotRulesSettingError` naming the setting and what it accepts. Every
number has a range (``LIMITS``): a value far outside it (a lease of ``1e300``
seconds) would pass a "positive number" check and then break every call to a
shared store.

SPEC 5 and 8 (the modes and the fetch policy's limits the settings choose).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence

from ..engine.stores import redact_url, store_kind

__all__ = ["LIMITS", "MAX_RETRY_DELAY", "USAGE_PURPOSES", "RobotRulesSettingError"]

USAGE_PURPOSES = ("train-ai", "search", "ai-input", "tdm")
"""What ``ROBOTRULES_PURPOSES`` may list (the engine's ``PURPOSES``)."""

MAX_RETRY_DELAY = 600.0
"""The back-off between fetches of an unreachable robots.txt never exceeds this."""

DAY = 86_400.0
LIMITS: dict[str, float] = {
    "ROBOTRULES_MAX_SIZE": 10_000_000,
    "ROBOTRULES_RETRY_DELAY": MAX_RETRY_DELAY,
    "ROBOTRULES_UNREACHABLE_TIMEOUT": 7 * DAY,
    "ROBOTRULES_MAX_AGE": 365 * DAY,
    "ROBOTRULES_MIN_AGE": 365 * DAY,
    "ROBOTRULES_CACHE_SIZE": 100_000_000,
    "ROBOTRULES_CACHE_BYTES": 2**40,
    "ROBOTRULES_AUTOMATON_BYTES": 2**40,
    "ROBOTRULES_MAX_CRAWL_DELAY": DAY,
    "ROBOTRULES_MAX_WAITING_PER_ORIGIN": 10_000_000,
    "ROBOTRULES_CONCURRENT_FETCHES": 10_000,
    "ROBOTRULES_LEASE": 3_600.0,
    "ROBOTRULES_PAGE_MAX_HTML": 10_000_000,
}
"""The largest value each numeric setting accepts (README's settings table says the same)."""


class RobotRulesSettingError(ValueError):
    """A ``ROBOTRULES_*`` setting (or spider attribute) has a value that cannot be used.

    A ``ValueError``: Scrapy reports it, with this message as the last line
    of the traceback, and the crawl does not start.
    """


def invalid(name: str, expected: str, value: object) -> RobotRulesSettingError:
    return RobotRulesSettingError(f"{name} must be {expected}, not {value!r}")


def as_choice(name: str, value: object, choices: Sequence[str]) -> str:
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(repr(c) for c in choices)
    raise invalid(name, f"one of {listed}", value)


def as_number(value: object) -> float | None:
    """``value`` as a finite float, or ``None``; booleans are no numbers here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def plain(number: float) -> str:
    """``31536000``, ``0.5``: a number as a person writes it."""
    return str(int(number)) if float(number).is_integer() else repr(number)


def as_seconds(name: str, value: object, *, zero: bool = True) -> float:
    number = as_number(value)
    maximum = LIMITS[name]
    if number is None or number < 0 or (number == 0 and not zero) or number > maximum:
        bound = "0 or more" if zero else "more than 0"
        raise invalid(name, f"a number of seconds, {bound} and at most {plain(maximum)}", value)
    return number


def as_integer(name: str, value: object, *, minimum: int) -> int:
    number = as_number(value)
    maximum = int(LIMITS[name])
    if number is None or not number.is_integer() or not minimum <= number <= maximum:
        raise invalid(name, f"a whole number from {minimum} to {maximum}", value)
    return int(number)


def as_boolean(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("0", "1", "true", "false"):
        return value.strip().lower() in ("1", "true")
    raise invalid(name, "True or False (or 1, 0, 'true', 'false')", value)


def as_purposes(value: object) -> tuple[str, ...]:
    """A list (or comma-separated string) of purposes, each one of USAGE_PURPOSES."""
    name = "ROBOTRULES_PURPOSES"
    listed = ", ".join(repr(p) for p in USAGE_PURPOSES)
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple, set, frozenset)):
        raise invalid(name, f"a list of purposes among {listed}", value)
    purposes: list[str] = []
    for item in items:
        purpose = item.strip() if isinstance(item, str) else item
        if purpose == "":
            continue
        if purpose not in USAGE_PURPOSES:
            raise invalid(name, f"a list of purposes among {listed}", value)
        if purpose not in purposes:
            purposes.append(purpose)
    return tuple(purposes)


def as_field_name(name: str, value: object) -> str:
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise invalid(name, "a non-empty item field name", value)


def as_store(value: object) -> str:
    name = "ROBOTRULES_STORE"
    expected = "'memory', 'sqlite:///absolute/path.db', 'sqlite:relative/path.db' or 'redis://...'"
    if not isinstance(value, str):
        raise invalid(name, expected, value)
    shown = redact_url(value)
    try:
        kind = store_kind(value.strip())
    except ValueError:
        raise invalid(name, expected, shown) from None
    if kind == "redis" and importlib.util.find_spec("redis") is None:
        raise RobotRulesSettingError(
            f"{name} = {shown!r} needs redis-py: pip install 'scrapy-robotrules[redis]'"
        )
    return value.strip()
