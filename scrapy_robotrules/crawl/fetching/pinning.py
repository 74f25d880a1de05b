"""Pinned robots.txt in a running crawl (``ROBOTRULES_PINNED``): held while the live file differs.

An origin whose pin (``engine.operator_tools.pins``) names another file than the one
held (by SHA-256; no file at all, a 404 or a refusal, differs from every
pin) is held as an unreachable origin without earlier rules is (SPEC 8):
its requests wait, the file is fetched again when it goes stale, and after
``ROBOTRULES_UNREACHABLE_TIMEOUT`` the waiting requests are dropped with
:class:`.RobotsTxtPinMismatch`, as are its new ones until a fetch brings
the pinned file. One WARNING per hold names both SHA-256 values;
``robotrules/pinned/held`` counts the holds. The check is on the entry
that decides, whoever fetched it: a shared store keeps the real file for
the fleet, and each crawler holds the origin by its own pins.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robotrules.crawl.config.table import value
from scrapy_robotrules.crawl.exceptions import RobotsTxtPinMismatch
from scrapy_robotrules.crawl.requestmeta import origin_for

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.settings import BaseSettings

    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.operator_tools.pins import Pins
    from scrapy_robotrules.engine.stores import Entry, RulesStore

__all__ = ["SETTING", "Held", "PinHolds"]

logger = logging.getLogger(__name__)

SETTING = "ROBOTRULES_PINNED"


class Held:
    """An origin held by its pin: since when, and why (the two SHA-256 values)."""

    __slots__ = ("actual", "expected", "since")

    def __init__(self, since: float, expected: str, actual: str | None) -> None:
        self.since = since
        self.expected = expected
        self.actual = actual

    def dropped(self, origin: str, seconds: float) -> RobotsTxtPinMismatch:
        """Why a request held ``seconds`` (past the timeout) is dropped."""
        return RobotsTxtPinMismatch(origin, seconds, self.reason)

    @property
    def reason(self) -> str:
        live = self.actual if self.actual is not None else "no file"
        return f"robots.txt differs from its pin (pinned {self.expected}, live {live})"


class _Live(NamedTuple):
    sha256: str | None
    what: str


def _live(entry: Entry) -> _Live:
    """The live file's SHA-256 (``None``: no file, or not known) and how to name it."""
    if entry.robots is not None and entry.sha256 is not None:
        return _Live(entry.sha256, entry.sha256)
    if entry.robots is not None:
        return _Live(None, "a file whose SHA-256 is not known (cut at ROBOTRULES_MAX_SIZE)")
    status = f"HTTP {entry.status}" if entry.status is not None else "no answer"
    return _Live(None, f"no file ({status}, {entry.outcome})")


class PinHolds:
    """The crawler's pins, and the origins they hold now."""

    def __init__(self, pins: Pins, reporter: Reporter, store: RulesStore) -> None:
        self.pins = pins
        self.store = store
        self.reporter = reporter
        self._held: dict[str, Held] = {}
        """Origins held now; at most one per pinned origin met."""

    @classmethod
    def from_settings(
        cls, settings: BaseSettings, reporter: Reporter, store: RulesStore
    ) -> PinHolds | None:
        """The pins (read through the setting table), ``None`` when there are none."""
        pins: Pins = value(settings, SETTING)
        return cls(pins, reporter, store) if pins.any else None

    def differs(self, origin: str, entry: Entry) -> bool:
        """Whether ``entry`` is not the file pinned for ``origin`` (no pin: it never differs)."""
        expected = self.pins.for_origin(origin)
        return expected is not None and _live(entry).sha256 != expected

    def differ(self, request: Request) -> bool:
        """Whether the file at hand for ``request``'s origin is not its pinned one."""
        origin = origin_for(request)
        entry = self.store.get(origin)
        return entry is not None and self.differs(origin, entry)

    def held(self, origin: str) -> Held | None:
        """The hold of ``origin`` as last checked, if it is held."""
        return self._held.get(origin)

    def check(self, origin: str, entry: Entry, now: float) -> Held | None:
        """The hold of ``origin`` under ``entry``, begun now if need be; ``None``: not held.

        Not for an unreachable entry without earlier rules: that holds the
        origin anyway (and an outage does not end a hold).
        """
        expected = self.pins.for_origin(origin)
        if expected is None:
            return None
        live = _live(entry)
        if live.sha256 == expected:
            if self._held.pop(origin, None) is not None:
                logger.info(
                    "robots.txt of %(origin)s is its pinned file again:"
                    " its requests are no longer parked",
                    {"origin": origin},
                    extra=self.reporter.spider,
                )
            return None
        held = self._held.get(origin)
        if held is None:
            held = self._held[origin] = Held(now, expected, live.sha256)
            self.reporter.inc("pinned/held")
            logger.warning(
                "robots.txt of %(origin)s differs from its pin in ROBOTRULES_PINNED:"
                " pinned SHA-256 %(expected)s, live %(live)s; its requests are parked"
                " and dropped after ROBOTRULES_UNREACHABLE_TIMEOUT until the pin is changed",
                {"origin": origin, "expected": expected, "live": live.what},
                extra=self.reporter.spider,
            )
        else:
            held.actual = live.sha256
        return held
