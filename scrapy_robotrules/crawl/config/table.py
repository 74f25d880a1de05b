"""The table of every setting and spider attribute this package reads: the one place.

Each ``ROBOTRULES_*`` setting has one row (:class:`Setting`): its name, its
default, its reader (from :mod:`.config.values`) and, for a number, its
range. Every component reads its settings through :func:`value` and its
spider attributes through :func:`spider_value`, so what a crawl uses is
what was checked: :func:`check` reads every row (and every ``robotrules_*``
attribute of a spider) before any request, and a bad value ends there with
one :class:`~.setting_values.RobotRulesSettingError` naming it.

A ``ROBOTRULES_*`` setting or ``robotrules_*`` spider attribute that is in
no row does nothing: :func:`unknown` names it, with the closest real one,
since a misspelt setting would otherwise leave its default in force
unseen. A renamed setting (:data:`RENAMED`) is still read under its old
name, for the row of its new one, and :func:`deprecated` says so.

Spider attributes are read only where the spider's class or instance
defines them (:func:`defined`), found without calling ``__getattr__``: a
``unittest.mock.Mock`` spider, as Scrapy's own tests build crawlers,
answers every name with a Mock and so has none. A real attribute of the
wrong type is still an error.

SPEC 5 and 8 (the modes and the fetch policy's limits the settings choose).
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy.settings import SETTINGS_PRIORITIES

from scrapy_robotrules.crawl.config.values import (
    MAX_RETRY_DELAY,
    as_agent,
    as_audit,
    as_boolean,
    as_choice,
    as_delay_action,
    as_field_name,
    as_integer,
    as_patterns,
    as_pins,
    as_policies,
    as_purposes,
    as_ratio,
    as_scheduler,
    as_seconds,
    as_sitemap_rules,
    as_store,
)
from scrapy_robotrules.engine.operator_tools.audit_trail import ENFORCE, MODES
from scrapy_robotrules.engine.operator_tools.site_policies import CLAMP, DELAY_ACTIONS
from scrapy_robotrules.engine.page.html import DEFAULT_LIMIT as DEFAULT_PAGE_MAX_HTML
from scrapy_robotrules.engine.robots.agents import AGENT_MATCH_STYLES, TOKEN
from scrapy_robotrules.engine.robots.fetch_outcomes import (
    DEFAULT_MAX_AGE,
    DEFAULT_MIN_AGE,
    UNAUTHORIZED_CHOICES,
)
from scrapy_robotrules.engine.robots.hostile.automata import DEFAULT_AUTOMATON_BYTES
from scrapy_robotrules.engine.robots.precedence import MOST_SPECIFIC, PRECEDENCE_MODES
from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE
from scrapy_robotrules.engine.stores import DEFAULT_CACHE_BYTES

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = [
    "ATTRIBUTES",
    "LIMITS",
    "PAGE_NOINDEX_CHOICES",
    "RENAMED",
    "TABLE",
    "Setting",
    "attribute_name",
    "check",
    "defined",
    "deprecated",
    "spider_value",
    "unknown",
    "value",
]

Reader = Callable[[str, object, "BaseSettings"], Any]
"""``(name, value, settings)`` to the checked value, or RobotRulesSettingError."""

DAY = 86_400.0
PAGE_NOINDEX_CHOICES = ("mark", "drop", "ignore")
"""What ``ROBOTRULES_PAGE_NOINDEX`` (and ``ROBOTRULES_USAGE_ITEMS``) do with items."""


@dataclass(frozen=True)
class Setting:
    """One setting: its name, default, reader and (for a number) its range.

    ``kind``, ``choices`` and ``above`` say the same for a reader of the
    documentation: the settings reference (``docs/reference/settings.rst``)
    takes every default, type and range from this table.
    """

    name: str
    default: Any
    read: Reader
    minimum: float | None = None
    """The smallest number accepted (``0`` for ``> 0`` durations, which refuse 0 itself)."""
    maximum: float | None = None
    kind: str = field(default="", kw_only=True)
    """What the value is (``bool``, ``int``...), for the documentation."""
    choices: tuple[str, ...] = field(default=(), kw_only=True)
    """The values accepted, for a setting that takes one of a few."""
    above: bool = field(default=False, kw_only=True)
    """The range excludes ``minimum`` itself (``> 0``)."""


def _choice(name: str, default: str, choices: tuple[str, ...]) -> Setting:
    return Setting(
        name,
        default,
        lambda n, v, _: as_choice(n, v, choices),
        kind="str",
        choices=choices,
    )


def _boolean(name: str, default: bool) -> Setting:
    return Setting(name, default, lambda n, v, _: as_boolean(n, v), kind="bool")


def _seconds(name: str, default: float, maximum: float, *, zero: bool = True) -> Setting:
    return Setting(
        name,
        default,
        lambda n, v, _: as_seconds(n, v, maximum=maximum, zero=zero),
        0,
        maximum,
        kind="float (seconds)",
        above=not zero,
    )


def _integer(name: str, default: int, minimum: int, maximum: int) -> Setting:
    return Setting(
        name,
        default,
        lambda n, v, _: as_integer(n, v, minimum=minimum, maximum=maximum),
        minimum,
        maximum,
        kind="int",
    )


def _ratio(name: str, default: float) -> Setting:
    return Setting(name, default, lambda n, v, _: as_ratio(n, v), 0, 1, kind="float")


def _field(name: str, default: str) -> Setting:
    return Setting(name, default, lambda n, v, _: as_field_name(n, v), kind="str")


_ROWS = (
    # How robots.txt is read and matched (config/settings.py).
    _choice("ROBOTRULES_PRECEDENCE", MOST_SPECIFIC, PRECEDENCE_MODES),
    _choice("ROBOTRULES_AGENT_MATCH", TOKEN, AGENT_MATCH_STYLES),
    Setting("ROBOTRULES_USER_AGENT", None, lambda n, v, _: as_agent(n, v), kind="str or None"),
    _integer("ROBOTRULES_MAX_SIZE", DEFAULT_MAX_SIZE, 1, 10_000_000),
    _choice("ROBOTRULES_UNAUTHORIZED", "allow", UNAUTHORIZED_CHOICES),
    _seconds("ROBOTRULES_RETRY_DELAY", 5.0, MAX_RETRY_DELAY, zero=False),
    _seconds("ROBOTRULES_UNREACHABLE_TIMEOUT", 300.0, 7 * DAY),
    _seconds("ROBOTRULES_MAX_AGE", DEFAULT_MAX_AGE, 365 * DAY, zero=False),
    _seconds("ROBOTRULES_MIN_AGE", DEFAULT_MIN_AGE, 365 * DAY),
    _integer("ROBOTRULES_CACHE_SIZE", 100_000, 1, 100_000_000),
    _integer("ROBOTRULES_CACHE_BYTES", DEFAULT_CACHE_BYTES, 1, 2**40),
    _integer("ROBOTRULES_AUTOMATON_BYTES", DEFAULT_AUTOMATON_BYTES, 0, 2**40),
    _boolean("ROBOTRULES_CRAWL_DELAY", True),
    _seconds("ROBOTRULES_MAX_CRAWL_DELAY", 60.0, DAY),
    _integer("ROBOTRULES_MAX_WAITING_PER_ORIGIN", 1000, 0, 10_000_000),
    _integer("ROBOTRULES_CONCURRENT_FETCHES", 64, 1, 10_000),
    Setting(
        "ROBOTRULES_SCHEDULER",
        None,
        lambda n, v, _: as_scheduler(n, v),
        kind="str or class (a scheduler; None: Scrapy's)",
    ),
    Setting("ROBOTRULES_STORE", "memory", lambda _, v, __: as_store(v), kind="str (a store URL)"),
    _seconds("ROBOTRULES_LEASE", 10.0, 3_600.0, zero=False),
    # Page-level directives (pages/directives.py).
    _boolean("ROBOTRULES_PAGE_NOFOLLOW", True),
    _boolean("ROBOTRULES_PAGE_NOFOLLOW_LINKS", False),
    _choice("ROBOTRULES_PAGE_NOINDEX", "mark", PAGE_NOINDEX_CHOICES),
    _field("ROBOTRULES_PAGE_NOINDEX_FIELD", "robotrules_noindex"),
    _integer("ROBOTRULES_PAGE_MAX_HTML", DEFAULT_PAGE_MAX_HTML, 1, 10_000_000),
    # Usage preferences (pages/usage.py).
    Setting(
        "ROBOTRULES_PURPOSES",
        [],
        lambda _, v, __: as_purposes(v),
        kind="list of str, or a comma-separated str",
    ),
    _choice("ROBOTRULES_USAGE_ITEMS", "mark", PAGE_NOINDEX_CHOICES),
    _field("ROBOTRULES_USAGE_FIELD", "robotrules_usage_refused"),
    # Operator controls: mode and audit trail (config/operator.py), site policies
    # (config/site_policies.py).
    _choice("ROBOTRULES_MODE", ENFORCE, MODES),
    Setting("ROBOTRULES_AUDIT", None, as_audit, kind="str (a path or a feed URI) or None"),
    _integer("ROBOTRULES_AUDIT_BUFFER", 10_000, 1, 10_000_000),
    Setting(
        "ROBOTRULES_POLICIES",
        None,
        lambda _, v, __: as_policies(v),
        kind="dict, or a JSON object as str",
    ),
    Setting(
        "ROBOTRULES_MAX_CRAWL_DELAY_ACTION",
        CLAMP,
        lambda n, v, _: as_delay_action(n, v),
        kind="str",
        choices=DELAY_ACTIONS,
    ),
    Setting(
        "ROBOTRULES_PINNED",
        None,
        lambda _, v, __: as_pins(v),
        kind="dict of host or origin to SHA-256 hex, or a JSON object as str",
    ),
    # Sitemaps from the same fetch (sitemaps.py).
    _boolean("ROBOTRULES_SCHEDULE_SITEMAPS", False),
    Setting(
        "ROBOTRULES_SITEMAP_FOLLOW",
        [""],
        lambda n, v, _: as_patterns(n, v),
        kind="list of str (regular expressions)",
    ),
    Setting(
        "ROBOTRULES_SITEMAP_RULES",
        [("", "parse")],
        lambda n, v, _: as_sitemap_rules(n, v),
        kind="list of (regex, callback name) pairs",
    ),
    # The Spidermon monitors' thresholds (monitors.py, the spidermon extra).
    _integer("ROBOTRULES_SPIDERMON_MAX_UNREACHABLE_ORIGINS", 0, 0, 1_000_000_000),
    _integer("ROBOTRULES_SPIDERMON_MAX_LOST_REQUESTS", 0, 0, 1_000_000_000),
    _integer("ROBOTRULES_SPIDERMON_MAX_UNCHECKED_REQUESTS", 0, 0, 1_000_000_000),
    _ratio("ROBOTRULES_SPIDERMON_MAX_FORBIDDEN_RATIO", 0.5),
    _integer("ROBOTRULES_SPIDERMON_MAX_FETCH_ERRORS", 0, 0, 1_000_000_000),
)

TABLE: dict[str, Setting] = {row.name: row for row in _ROWS}
"""Every ``ROBOTRULES_*`` setting this package reads, by name."""

RENAMED: dict[str, str] = {
    "ROBOTRULES_FOLLOW_SITEMAPS": "ROBOTRULES_SCHEDULE_SITEMAPS",
}
"""Deprecated setting names, each to the name that replaced it.

An old name is still read for its new one, which wins when both are set,
for at least two minor releases after the one that renamed it (the version
policy in CHANGES.rst).
"""

_OLD_NAMES: dict[str, tuple[str, ...]] = {
    new: tuple(old for old, renamed in RENAMED.items() if renamed == new)
    for new in RENAMED.values()
}

LIMITS: dict[str, float] = {row.name: row.maximum for row in _ROWS if row.maximum is not None}
"""The largest value each numeric setting accepts (the settings reference shows it)."""

ATTRIBUTES: dict[str, str] = {
    "robotrules_user_agent": "ROBOTRULES_USER_AGENT",
    "robotrules_precedence": "ROBOTRULES_PRECEDENCE",
    "robotrules_mode": "ROBOTRULES_MODE",
}
"""The spider attributes this package reads, each overriding the setting it names."""


def value(settings: BaseSettings, name: str) -> Any:
    """The checked value of setting ``name`` (its default when unset or ``None``).

    Unset, it is read from its old name (:data:`RENAMED`) if that is set; a
    bad value there is named as the old name, the one the project wrote.
    """
    row = TABLE[name]
    given_as = name
    if settings.get(name) is None:
        old_names = _OLD_NAMES.get(name, ())
        given_as = next((old for old in old_names if settings.get(old) is not None), name)
    return row.read(given_as, settings.get(given_as, row.default), settings)


def deprecated(settings: BaseSettings) -> list[str]:
    """One line per old name of a renamed setting (:data:`RENAMED`) that is set."""
    lines = []
    for old, new in RENAMED.items():
        if settings.get(old) is None:
            continue
        line = f"The {old} setting is deprecated, use {new} instead"
        if settings.get(new) is not None:
            line += f" (both are set: {new} is the one read)"
        lines.append(line)
    return lines


def defined(spider: object, name: str) -> object | None:
    """The spider's attribute ``name`` when its class or instance defines it, else ``None``.

    Looked up without ``__getattr__`` first (``inspect.getattr_static``): a
    Mock spider's made-up attributes are no attributes here.
    """
    if spider is None:
        return None
    try:
        inspect.getattr_static(spider, name)
    except AttributeError:
        return None
    found: object = getattr(spider, name, None)
    return found


def attribute_name(spider: object, attribute: str) -> str:
    """``robotrules_precedence (attribute of spider 'shop')``: how errors name an attribute."""
    name = defined(spider, "name") or type(spider).__name__
    return f"{attribute} (attribute of spider {name!r})"


def spider_value(spider: object, attribute: str, settings: BaseSettings) -> Any:
    """The checked value of the spider's ``robotrules_*`` attribute; ``None`` if it has none.

    Also ``None`` when the setting it names was set above the spider's own
    priority (``-s`` on the command line): an attribute is the spider's word,
    as its ``custom_settings`` are, and Scrapy's order puts the command line
    first. It still beats ``custom_settings`` (the same priority): it names
    the one thing it sets.
    """
    checked = _checked_attribute(spider, attribute, settings)
    priority = settings.getpriority(ATTRIBUTES[attribute])
    if priority is not None and priority > SETTINGS_PRIORITIES["spider"]:
        return None
    return checked


def _checked_attribute(spider: object, attribute: str, settings: BaseSettings) -> Any:
    found = defined(spider, attribute)
    if found is None:
        return None
    return TABLE[ATTRIBUTES[attribute]].read(attribute_name(spider, attribute), found, settings)


def check(settings: BaseSettings, spider: object = None) -> None:
    """Read every setting and every ``robotrules_*`` attribute of ``spider``: the first bad one
    raises RobotRulesSettingError."""
    for name in TABLE:
        value(settings, name)
    for attribute in ATTRIBUTES:
        _checked_attribute(spider, attribute, settings)


def unknown(settings: BaseSettings, spider: object = None) -> list[str]:
    """One line per ``ROBOTRULES_*`` setting or ``robotrules_*`` attribute that does nothing."""
    lines = [
        _unknown(name, name, TABLE)
        for name in sorted(str(key) for key in settings)
        if name.startswith("ROBOTRULES_") and name not in TABLE and name not in RENAMED
    ]
    if spider is not None:
        names = set(vars(spider)) if hasattr(spider, "__dict__") else set()
        for klass in type(spider).__mro__:
            names.update(vars(klass))
        lines += [
            _unknown(name, attribute_name(spider, name), ATTRIBUTES)
            for name in sorted(names)
            if name.startswith("robotrules_") and name not in ATTRIBUTES
        ]
    return lines


def _unknown(name: str, shown: str, known: dict[str, Any]) -> str:
    # Compared without the prefix all names share, which would make any two look alike.
    prefix = len("ROBOTRULES_")
    by_rest = {other[prefix:].lower(): other for other in known}
    close = [
        by_rest[rest] for rest in difflib.get_close_matches(name[prefix:].lower(), by_rest, n=1)
    ]
    if name.isupper() or name.upper() not in TABLE:
        hint = f"did you mean {close[0]}?" if close else "no known name is close"
    else:  # a setting's name as a spider attribute
        hint = f"set {name.upper()} in the spider's custom_settings instead"
    return f"{shown} is not read by scrapy-robotrules and has no effect ({hint})"
