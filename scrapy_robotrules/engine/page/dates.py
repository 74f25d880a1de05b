"""``unavailable_after`` dates, in the formats Google's robots meta tag documentation names.

No SPEC section (page-level rules are outside it).

"The date/time must be specified in a widely adopted format including, but
not limited to RFC 822, RFC 850, and ISO 8601. The rule is ignored if no
valid date/time is specified." So a value that is no date is ``None`` (the
rule is then reported as malformed), never an exception.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email.utils import parsedate_tz

__all__ = ["parse_date"]

MAX_DATE_CHARS = 64
"""Longer values are no date: parsing them would only cost time."""


def parse_date(text: str) -> datetime | None:
    """An ``unavailable_after`` date in UTC, or ``None`` when it is no date.

    ``25 Jun 2010 15:00:00 PST`` and ``Tue, 25 May 2010 21:42:43 GMT`` (RFC
    822/1123), ``Tuesday, 25-May-10 21:42:43 GMT`` (RFC 850), asctime,
    ``2020-09-21`` and ``2026-12-31T23:59:59Z`` (ISO 8601). Without a time
    zone, UTC; without a time, the start of the day (the earlier, more
    restrictive reading).
    """
    text = text.strip()
    if not text or len(text) > MAX_DATE_CHARS:
        return None
    iso = text[:-1] + "+00:00" if text[-1] in "Zz" else text
    try:
        try:
            parsed = datetime.fromisoformat(iso)
        except ValueError:
            pass
        else:
            if parsed.tzinfo is None:
                return parsed.replace(tzinfo=timezone.utc)
            return parsed.astimezone(timezone.utc)
        fields = parsedate_tz(text) or parsedate_tz(text + " 00:00:00")
        if fields is None:
            return None
        year, month, day, hour, minute, second = fields[:6]
        stamp = datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
        return stamp - timedelta(seconds=fields[9] or 0)
    except (ValueError, IndexError, TypeError, OverflowError):
        return None
