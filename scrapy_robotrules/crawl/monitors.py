"""Spidermon monitors of a crawl's robots.txt (the ``spidermon`` extra: Spidermon installed).

One line adds them to a project that runs Spidermon::

    SPIDERMON_SPIDER_CLOSE_MONITORS = ("scrapy_robotrules.crawl.monitors.RobotRulesMonitorSuite",)

Each monitor reads the crawl's ``robotrules/*`` stats when the spider
closes and compares one figure with its threshold, a ``ROBOTRULES_SPIDERMON_*``
setting of the settings table (checked before the crawl like every other):
origins whose robots.txt was left unreachable, requests lost at close or
never checked, the share of requests forbidden, robots.txt fetch errors.

This package settles its closing stats in its own ``spider_closed``
handlers, connected when its extension is built (priority 0): Spidermon's
extension, at its usual priority (500), runs after them. Should it run
first, or the add-on be off, the closing stat is missing and each monitor
fails saying so, rather than pass on figures that are not final. A crawl
that does not obey robots.txt (``ROBOTSTXT_OBEY`` off) skips them.

Spidermon is imported here only: the package works without it.

SPEC 7 (forbidden requests, why dropped) and 8 (unreachable origins, lost
requests, fetch errors).
"""

from __future__ import annotations

from typing import Any, ClassVar

try:
    from spidermon import MonitorSuite, monitors
    from spidermon.contrib.scrapy.monitors.base import BaseScrapyMonitor
except ImportError as error:  # pragma: no cover  (the tests install the extra)
    raise ImportError(
        f"{__name__} needs Spidermon ({error}): install it with pip install 'spidermon>=1.20'"
    ) from error

from scrapy_robotrules.crawl.config.table import value
from scrapy_robotrules.crawl.reporting.reporter import STATS_PREFIX

__all__ = [
    "CLOSING_STAT",
    "FetchErrorsMonitor",
    "ForbiddenShareMonitor",
    "RobotRulesMonitorSuite",
    "UndecidedRequestsMonitor",
    "UnreachableOriginsMonitor",
]

CLOSING_STAT = f"{STATS_PREFIX}origins/unreachable_at_close"
"""Set when this package's stats are final, as the spider closes."""
_EXCEPTIONS = f"{STATS_PREFIX}exception_count/"
_STATUSES = f"{STATS_PREFIX}response_status_count/"


class _RobotRulesMonitor(BaseScrapyMonitor):  # type: ignore[misc]  # Spidermon is untyped
    """The stats and thresholds the monitors below share."""

    def stat(self, key: str) -> float:
        """The ``robotrules/`` stat ``key`` (0 when never counted), once the stats are final."""
        stats: dict[str, Any] = self.stats
        if not self.crawler.settings.getbool("ROBOTSTXT_OBEY"):
            self.skipTest("ROBOTSTXT_OBEY is off: robots.txt is not obeyed in this crawl")
        if CLOSING_STAT not in stats:
            self.fail(
                f"{CLOSING_STAT} is not in the crawl's stats: scrapy-robotrules' stats are not"
                " final. Enable its add-on (ADDONS) and keep Spidermon's extension at a"
                " priority above 0 in EXTENSIONS (its usual 500)."
            )
        return float(stats.get(f"{STATS_PREFIX}{key}", 0))

    def threshold(self, name: str) -> Any:
        return value(self.crawler.settings, name)

    def at_most(self, found: float, what: str, setting: str) -> None:
        limit = self.threshold(setting)
        if found > limit:
            self.fail(f"{found:g} {what}, more than {setting} = {limit:g}")


@monitors.name("robots.txt: unreachable origins")
class UnreachableOriginsMonitor(_RobotRulesMonitor):
    """Origins whose robots.txt was still unreachable when the crawl closed.

    Their requests were held, then dropped (``robotrules/unreachable``).
    Threshold: ``ROBOTRULES_SPIDERMON_MAX_UNREACHABLE_ORIGINS`` (0).
    """

    @monitors.name("Origins left unreachable")  # type: ignore[untyped-decorator]
    def test_origins_left_unreachable(self) -> None:
        self.at_most(
            self.stat("origins/unreachable_at_close"),
            "origins' robots.txt left unreachable (robotrules/origins/unreachable_at_close)",
            "ROBOTRULES_SPIDERMON_MAX_UNREACHABLE_ORIGINS",
        )


@monitors.name("robots.txt: requests not decided")
class UndecidedRequestsMonitor(_RobotRulesMonitor):
    """Requests robots.txt never decided: lost at close, or let through unchecked.

    Thresholds: ``ROBOTRULES_SPIDERMON_MAX_LOST_REQUESTS`` (0) and
    ``ROBOTRULES_SPIDERMON_MAX_UNCHECKED_REQUESTS`` (0).
    """

    @monitors.name("Requests lost at close")  # type: ignore[untyped-decorator]
    def test_requests_lost_at_close(self) -> None:
        self.at_most(
            self.stat("lost_at_close"),
            "requests still waiting for robots.txt when the crawl closed"
            " (robotrules/lost_at_close)",
            "ROBOTRULES_SPIDERMON_MAX_LOST_REQUESTS",
        )

    @monitors.name("Requests unchecked")  # type: ignore[untyped-decorator]
    def test_requests_unchecked(self) -> None:
        self.at_most(
            self.stat("unchecked"),
            "requests robots.txt had no say on (robotrules/unchecked: dont_obey_robotstxt,"
            " data: and file: URLs)",
            "ROBOTRULES_SPIDERMON_MAX_UNCHECKED_REQUESTS",
        )


@monitors.name("robots.txt: forbidden share")
class ForbiddenShareMonitor(_RobotRulesMonitor):
    """The share of the crawl's requests robots.txt forbade (``forbidden / offered``).

    A high share often means an agent the site shuts out, or a spider
    following links it may not. Threshold:
    ``ROBOTRULES_SPIDERMON_MAX_FORBIDDEN_RATIO`` (0.5). Skipped without requests.
    """

    @monitors.name("Share of requests forbidden")  # type: ignore[untyped-decorator]
    def test_forbidden_share(self) -> None:
        forbidden, offered = self.stat("forbidden"), self.stat("offered")
        if not offered:
            self.skipTest("no request was offered")
        self.at_most(
            forbidden / offered,
            f"of the requests forbidden ({forbidden:g} of {offered:g}:"
            " robotrules/forbidden / robotrules/offered)",
            "ROBOTRULES_SPIDERMON_MAX_FORBIDDEN_RATIO",
        )


@monitors.name("robots.txt: fetch errors")
class FetchErrorsMonitor(_RobotRulesMonitor):
    """robots.txt downloads that failed: a network error, or a 429 or 5xx answer.

    Each leaves its origin unreachable for a while (its requests parked).
    Threshold: ``ROBOTRULES_SPIDERMON_MAX_FETCH_ERRORS`` (0).
    """

    @monitors.name("robots.txt fetch errors")  # type: ignore[untyped-decorator]
    def test_fetch_errors(self) -> None:
        self.stat("request_count")  # the stats are final
        stats: dict[str, Any] = self.stats
        errors = sum(
            count
            for key, count in stats.items()
            if key.startswith(_EXCEPTIONS)
            or (key.startswith(_STATUSES) and _server_error(key[len(_STATUSES) :]))
        )
        self.at_most(
            errors,
            "robots.txt fetch errors (robotrules/exception_count/*,"
            " robotrules/response_status_count/ 429 and 5xx)",
            "ROBOTRULES_SPIDERMON_MAX_FETCH_ERRORS",
        )


def _server_error(status: str) -> bool:
    return status == "429" or (len(status) == 3 and status.startswith("5"))


class RobotRulesMonitorSuite(MonitorSuite):  # type: ignore[misc]  # Spidermon is untyped
    """Every robots.txt monitor of this package, for ``SPIDERMON_SPIDER_CLOSE_MONITORS``."""

    monitors: ClassVar[list[type]] = [
        UnreachableOriginsMonitor,
        UndecidedRequestsMonitor,
        ForbiddenShareMonitor,
        FetchErrorsMonitor,
    ]
