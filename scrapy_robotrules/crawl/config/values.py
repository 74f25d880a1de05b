"""Reading one setting's value: numbers, durations, choices, lists, paths, the store URL.

Each reader returns the value in the type the crawl layer uses, or raises
:class:`RobotRulesSettingError` naming the setting and what it accepts. Every
number has a range (given by :mod:`.config.table`): a value far outside it
(a lease of ``1e300`` seconds) would pass a "positive number" check and
then break every call to a shared store. What a reader can find out without
side effects it finds before the crawl: an audit path that is a directory
or a file that cannot be opened for appending, a feed storage that refuses
to be built, a store URL redis-py refuses.

SPEC 5 and 8 (the modes and the fetch policy's limits the settings choose).
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.misc import load_object
from scrapy.utils.python import without_none_values
from w3lib.url import file_uri_to_path

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.engine.operator_tools.audit_trail import (
    text_without_credentials,
    url_without_credentials,
)
from scrapy_robotrules.engine.operator_tools.pins import PinError, Pins, parse_pins
from scrapy_robotrules.engine.operator_tools.site_policies import (
    DELAY_ACTIONS,
    Policies,
    PolicyError,
    parse_policies,
)
from scrapy_robotrules.engine.robots.agents import product_token
from scrapy_robotrules.engine.stores import redact_url, store_kind

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["MAX_RETRY_DELAY", "USAGE_PURPOSES", "RobotRulesSettingError", "storage_class"]

USAGE_PURPOSES = ("train-ai", "search", "ai-input", "tdm")
"""What ``ROBOTRULES_PURPOSES`` may list (the engine's ``PURPOSES``)."""

MAX_RETRY_DELAY = 600.0
"""The back-off between fetches of an unreachable robots.txt never exceeds this."""

DAY = 86_400.0


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


def as_seconds(name: str, value: object, *, maximum: float, zero: bool = True) -> float:
    number = as_number(value)
    if number is None or number < 0 or (number == 0 and not zero) or number > maximum:
        bound = "0 or more" if zero else "more than 0"
        raise invalid(name, f"a number of seconds, {bound} and at most {plain(maximum)}", value)
    return number


def as_integer(name: str, value: object, *, minimum: int, maximum: int) -> int:
    number = as_number(value)
    if number is None or not number.is_integer() or not minimum <= number <= maximum:
        raise invalid(name, f"a whole number from {minimum} to {maximum}", value)
    return int(number)


def as_ratio(name: str, value: object) -> float:
    """A share: a number from 0 to 1."""
    number = as_number(value)
    if number is None or not 0 <= number <= 1:
        raise invalid(name, "a number from 0 to 1", value)
    return number


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
    expected = (
        "'memory', 'sqlite:///absolute/path.db', 'sqlite:relative/path.db', 'redis://...',"
        " 'redis+cluster://...' or 'redis+sentinel://...'"
    )
    if not isinstance(value, str):
        raise invalid(name, expected, value)
    shown = redact_url(value)
    try:
        kind = store_kind(value.strip())
    except ValueError:
        raise invalid(name, expected, shown) from None
    if kind == "redis":
        if importlib.util.find_spec("redis") is None:
            raise RobotRulesSettingError(
                f"{name} = {shown!r} needs redis-py: pip install 'redis>=5'"
            )
        from scrapy_robotrules.engine.stores.redis import check_url

        try:
            check_url(value.strip())
        except ValueError as exc:
            raise RobotRulesSettingError(
                f"{name} = {shown!r} is refused by redis-py: {exc}"
            ) from None
    return value.strip()


def as_agent(name: str, value: object) -> str | None:
    """A user agent string that starts with a product token; ``None`` when unset."""
    if value is None or value in ("", b""):
        return None
    agent = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    if not isinstance(agent, str) or not product_token(agent):
        raise invalid(name, "a user agent string that starts with a product token", value)
    return agent


def as_delay_action(name: str, value: object) -> str:
    """What a Crawl-delay above the maximum does: ``clamp`` (also when unset) or ``skip``."""
    if value is None or value == "":
        return DELAY_ACTIONS[0]
    action = value.strip().lower() if isinstance(value, str) else value
    return as_choice(name, action, DELAY_ACTIONS)


def as_policies(value: object) -> Policies:
    """``ROBOTRULES_POLICIES``, read and checked by ``engine.operator_tools.site_policies``."""
    try:
        return parse_policies(value)
    except PolicyError as exc:
        raise RobotRulesSettingError(str(exc)) from None


def as_patterns(name: str, value: object) -> tuple[re.Pattern[str], ...]:
    """Regular expressions: one (a string) or a list of them."""
    items = [value] if isinstance(value, str) else value
    expected = "a list of regular expressions"
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        raise invalid(name, expected, value)
    try:
        return tuple(re.compile(item) for item in items)
    except (re.error, RecursionError, OverflowError) as exc:
        raise RobotRulesSettingError(f"{name} must be {expected}, not {value!r} ({exc})") from None


def as_sitemap_rules(name: str, value: object) -> tuple[tuple[re.Pattern[str], str], ...]:
    """``(regex, callback name)`` pairs, as ``SitemapSpider.sitemap_rules`` are."""
    expected = "a list of (regex, callback name) pairs"
    pairs = value if isinstance(value, (list, tuple)) else None
    if pairs is None or not all(
        isinstance(pair, (list, tuple))
        and len(pair) == 2
        and isinstance(pair[0], str)
        and isinstance(pair[1], str)
        and pair[1].strip()
        for pair in pairs
    ):
        raise invalid(name, expected, value)
    patterns = as_patterns(name, [regex for regex, _ in pairs])
    return tuple(zip(patterns, (callback.strip() for _, callback in pairs), strict=True))


def storage_class(settings: BaseSettings, uri: str) -> str | type[Any]:
    """The feed storage for ``uri``, chosen as Scrapy's ``FeedExporter`` chooses it.

    Raises :class:`RobotRulesSettingError` for a scheme no storage takes.
    """
    storages = without_none_values(settings.getwithbase("FEED_STORAGES"))
    scheme = _scheme(uri)
    if scheme not in storages:
        known = ", ".join(sorted(repr(s) for s in storages if s))
        raise RobotRulesSettingError(
            f"ROBOTRULES_AUDIT: no feed storage for {scheme!r} URIs"
            f" (FEED_STORAGES has {known}): {url_without_credentials(uri)!r}"
        )
    found: str | type[Any] = storages[scheme]
    return found


def _scheme(uri: str) -> str:
    scheme = urlparse(uri).scheme
    return "" if len(scheme) <= 1 else scheme  # ``C:`` is a Windows drive, not a scheme


def as_audit(name: str, value: object, settings: BaseSettings) -> str | None:
    """Where the audit trail goes: a path or a feed storage URI; ``None``: nowhere.

    Refused before the crawl, as the crawl's own open would refuse it: a
    local file the crawl cannot append to (a directory, a path through a
    file, a directory without write permission, an existing file that does
    not open for appending, as files of ``/proc`` and ``/sys`` do not even
    for root); a URI whose feed storage will not be built (``s3://``
    without boto3). Nothing is created or written yet: Scrapy's file
    storage makes the missing directories when the crawl opens it.
    """
    if value is None or value == "":
        return None
    if isinstance(value, os.PathLike):  # a pathlib.Path, as FEEDS accepts
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise invalid(name, "a path or a feed storage URI", type(value).__name__)
    uri = value.strip()
    storage = storage_class(settings, uri)
    scheme = _scheme(uri)
    if scheme in ("", "file"):
        path = Path(file_uri_to_path(uri) if scheme == "file" else uri)
        problem = _unwritable(path)
    else:
        problem = _unbuilt(storage, settings, uri)
    if problem is not None:
        raise RobotRulesSettingError(
            f"{name}: cannot write the audit trail to {url_without_credentials(uri)!r} ({problem})"
        )
    return uri


def _unwritable(path: Path) -> str | None:
    """Why the crawl could not append to the file ``path``, or ``None``."""
    if path.is_dir():
        return "a directory; give the path of a file"
    if path.is_file():
        return _not_appendable(path)
    if path.exists():  # a FIFO or a device: opening a FIFO would wait for its reader
        return None if os.access(path, os.W_OK) else "the file is not writable"
    parent = path.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{str(parent)!r} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"no permission to create files in {str(parent)!r}"
    return None


def _not_appendable(path: Path) -> str | None:
    """Why the existing file ``path`` does not open for appending, or ``None``.

    Opened as the file storage opens it (``open(path, "ab")``; it exists, so
    nothing is created) and closed unwritten: ``os.access`` says yes to root
    for a file the kernel will not open so (``/proc/version`` cannot seek to
    its end, ``/sys/kernel/notes`` refuses any writer).
    """
    try:
        with path.open("ab"):
            pass
    except OSError as exc:
        return f"it does not open for appending: {exc.strerror or type(exc).__name__}"
    return None


def _unbuilt(storage: str | type[Any], settings: BaseSettings, uri: str) -> str | None:
    """Why the feed storage for ``uri`` refuses to be built, or ``None``."""
    try:
        compat.feed_storage(load_object(storage), settings, uri)
    except Exception as exc:  # NotConfigured (a missing library), a bad URI, a bad class path
        why = redact_url(uri, text_without_credentials(str(exc)))
        return f"{type(exc).__name__}: {why}" if why else type(exc).__name__
    return None


def as_scheduler(name: str, value: object) -> str | type[Any] | None:
    """A scheduler class, or its import path, for the robots.txt scheduler to wrap."""
    if value is None or value == "":
        return None
    if not isinstance(value, (str, type)):
        raise invalid(name, "a scheduler class or its import path", value)
    try:
        found = load_object(value)
    except Exception as exc:  # ImportError, NameError, a path that is not dotted
        raise RobotRulesSettingError(
            f"{name}: cannot load {value!r}: {type(exc).__name__}"
        ) from None
    if not (isinstance(found, type) and issubclass(found, BaseScheduler)):
        raise invalid(name, "a scheduler class (scrapy.core.scheduler.BaseScheduler)", value)
    return value


def as_pins(value: object) -> Pins:
    """``ROBOTRULES_PINNED``, read and checked by the engine (``engine.operator_tools.pins``)."""
    try:
        return parse_pins(value)
    except PinError as exc:
        raise RobotRulesSettingError(str(exc)) from None
