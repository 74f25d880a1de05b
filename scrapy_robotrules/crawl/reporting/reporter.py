"""What a crawl tells of its robots.txt: stats, log lines and the closing summary.

Every ``robotrules/`` stat of the manager's parts is counted here (and
Scrapy's own ``robotstxt/*`` stats, through :mod:`.builtin_stats`), and every
dropped request logged here (without the credentials of its URL), counted by
the stats its reason names (:mod:`.exceptions`). SPEC 7 (why a request was dropped) and
SPEC 8 (unreachable and lost requests, counted and logged).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy import signals as scrapy_signals

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.exceptions import (
    DropReason,
    RobotsTxtNotFetched,
    RobotsTxtUnreachable,
)
from scrapy_robotrules.crawl.reporting.builtin_stats import BuiltinStats
from scrapy_robotrules.crawl.reporting.log import counted, shown
from scrapy_robotrules.crawl.reporting.startdenied import DeniedStarts

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


__all__ = ["BATCHED", "FLUSH_SECONDS", "ROBOTS_REQUEST", "STATS_PREFIX", "Reporter"]

logger = logging.getLogger(__name__)


STATS_PREFIX = "robotrules/"
ROBOTS_REQUEST = "robotrules_robots_txt"
FLUSH_SECONDS = 1.0
"""Verdicts counted (see ``Reporter.count``) reach the crawl's stats this often, at most."""
BATCHED = frozenset({"offered", "allowed"})
"""The verdicts counted at (nearly) every offer, duplicates included: added up in batches."""
"""Request meta key: set on this package's robots.txt requests."""


class _QuietRobotsRetries(logging.Filter):
    """Scrapy's "Gave up retrying" ERROR for a robots.txt request, as DEBUG.

    An unreachable robots.txt is this package's to report (one WARNING per
    origin, stats), and it is fetched again with back-off: each round of
    Scrapy's retries giving up is no error of the crawl.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.levelno > logging.DEBUG and isinstance(args, Mapping):
            request = args.get("request")
            if isinstance(request, Request) and request.meta.get(ROBOTS_REQUEST):
                record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


def quiet_robots_retries() -> None:
    retry_logger = logging.getLogger("scrapy.downloadermiddlewares.retry")
    if not any(isinstance(f, _QuietRobotsRetries) for f in retry_logger.filters):
        retry_logger.addFilter(_QuietRobotsRetries())


class Reporter:
    """The stats, log lines and signals of one crawler's robots.txt handling."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self._inc_value = self.stats.inc_value
        self.builtin = BuiltinStats(crawler)
        """Scrapy's own ``robotstxt/*`` stats, with the meaning its middleware gives them."""
        self._counts: defaultdict[str, int] = defaultdict(int)
        """Verdicts counted since the last flush: each offer counts twice, Scrapy's stats
        wrappers cost more than a dict (see ``count``)."""
        self.flush_call: compat.Timer | None = None
        """The next flush's timer; ``None`` while none is due (the decider reads it to ask less)."""
        self.allowed_again = 0
        """Offers allowed by an earlier answer, counted by the decider on this plain attribute;
        each flush adds them to ``offered`` and ``allowed``."""
        self._closed = False
        self.fetches = 0
        """robots.txt fetches completed, whatever their outcome."""
        self.slowest: tuple[float, str] | None = None
        """The longest fetch so far: seconds, robots.txt URL."""
        self._evicted: int | None = None
        """The ``evicted`` stat as last set."""
        self.summary_lines: list[Callable[[], str | None]] = []
        """More lines for the closing summary (the page directives add theirs)."""
        self._waiting = 0
        self.starts = DeniedStarts(crawler)
        """Start requests crawled and denied: the ``robotstxt_denied`` finish reason."""
        quiet_robots_retries()
        crawler.signals.connect(self.flush, signal=scrapy_signals.spider_idle)
        crawler.signals.connect(self._close, signal=scrapy_signals.spider_closed)

    @property
    def spider(self) -> dict[str, object]:
        """The ``extra`` of a log line: the crawler's spider."""
        return {"spider": self.crawler.spider}

    def inc(self, key: str, by: int = 1) -> None:
        self._inc_value(f"{STATS_PREFIX}{key}", by)

    def set(self, key: str, value: int) -> None:
        self.stats.set_value(f"{STATS_PREFIX}{key}", value)

    def store_event(self, name: str) -> None:
        self.inc(f"store/{name}")

    def count(self, verdict: str, by: int = 1) -> None:
        """Count a checked request: ``offered``, ``allowed``, ``forbidden`` or ``unreachable``.

        Those counted at every offer (``BATCHED``) reach the crawl's stats
        within ``FLUSH_SECONDS``, when the spider is idle and when it closes
        (see :meth:`flush`); the others at once (tests and tools watch them).
        """
        if verdict not in BATCHED:
            self._inc_value(f"{STATS_PREFIX}{verdict}", by)
            return
        self._counts[verdict] += by
        if self.flush_call is None:
            self._schedule_flush()

    def schedule_flush(self) -> None:
        """See that what was counted reaches the stats within ``FLUSH_SECONDS`` (see :meth:`count`).

        For the counts kept on plain attributes (:attr:`allowed_again`): call
        it after counting.
        """
        if self.flush_call is None:
            self._schedule_flush()

    def _schedule_flush(self) -> None:
        if self._closed:
            self.flush()
        else:
            self.flush_call = compat.call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        """Add the verdicts counted since the last flush to the crawl's stats."""
        if self.flush_call is not None:
            self.flush_call.cancel()
            self.flush_call = None
        counts, self._counts = self._counts, defaultdict(int)
        again, self.allowed_again = self.allowed_again, 0
        if again:
            counts["offered"] += again
            counts["allowed"] += again
        for verdict, by in counts.items():
            self._inc_value(f"{STATS_PREFIX}{verdict}", by)

    def _close(self) -> None:
        # Connected when the first component is built, before the spider
        # closes: earlier than most spider_closed handlers that read stats.
        self._closed = True
        self.flush()

    def waiting(self, change: int) -> None:
        """Requests waiting for robots.txt (parked, on disk, in the middleware): ``waiting/max``."""
        self._waiting += change
        if change > 0:
            self.stats.max_value(f"{STATS_PREFIX}waiting/max", self._waiting)

    def fetched(self, seconds: float, url: str, origins: int, evicted: int) -> None:
        """A robots.txt fetch ended: the fetch count, the slowest one, the files kept."""
        self.fetches += 1
        if self.slowest is None or seconds > self.slowest[0]:
            self.slowest = (seconds, url)
        self.set("origins", origins)
        if evicted != self._evicted:  # rarely moves: one stats call fewer per fetch
            self._evicted = evicted
            self.set("evicted", evicted)

    def record_drop(self, request: Request, exc: DropReason, *, scheduling: bool = False) -> None:
        """Count a request robots.txt drops, and log why: the scheduler and the middleware alike.

        ``scheduling``: dropped before the scheduler's duplicate filter (the
        gate), where Scrapy's ``robotstxt/forbidden`` counts a request once
        per fingerprint (see :mod:`.builtin_stats`). The stats are those
        the reason names (its ``stats``), whatever its kind.
        """
        if isinstance(exc, RobotsTxtNotFetched):
            self.lost([request])
            return
        for key in exc.stats:
            self._inc_value(f"{STATS_PREFIX}{key}", 1)
        if isinstance(exc, RobotsTxtUnreachable):
            logger.debug(
                "Dropped %(request)s: %(reason)s",
                {"request": shown(request), "reason": exc},
                extra=self.spider,
            )
        else:
            if exc.builtin:
                self.builtin.forbidden(request, scheduling=scheduling)
            if exc.denies_start:
                self.starts.denied(request)
            logger.debug(
                "Forbidden by robots.txt: %(request)s %(reason)s",
                {"request": shown(request), "reason": exc.reason},
                extra=self.spider,
            )

    def lost(self, requests: list[Request]) -> None:
        """Requests the crawl closed on, with nowhere to keep them: counted, each logged."""
        if not requests:
            return
        self.count("lost_at_close", len(requests))
        for request in requests:
            logger.debug(
                "Dropped %(request)s: the crawl closed while it waited for robots.txt",
                {"request": shown(request)},
                extra=self.spider,
            )

    def warn_lost(self) -> None:
        """One WARNING at close for the requests the crawl closed on (DEBUG lines name them)."""
        self.flush()
        lost = int(self.stats.get_value(f"{STATS_PREFIX}lost_at_close", 0))
        if lost:
            logger.warning(
                "%(requests)s still waiting for robots.txt when the crawl closed"
                " (no JOBDIR to save them in): counted as robotrules/lost_at_close",
                {"requests": f"{counted(lost, 'request')} {'was' if lost == 1 else 'were'}"},
                extra=self.spider,
            )

    def summary(self, origins: int) -> str:
        """One line on the crawl's robots.txt: files kept, fetches, drops, slowest file.

        A fetch is one robots.txt asked for; its requests (``request_count``)
        are one per URL it asked, each redirect followed counted.
        """
        self.flush()
        stats = self.stats

        def value(key: str) -> int:
            return int(stats.get_value(f"{STATS_PREFIX}{key}", 0))

        text = (
            f"robots.txt: files kept for {counted(origins, 'origin')},"
            f" {counted(self.fetches, 'fetch', 'fetches')}"
            f" ({counted(value('request_count'), 'request')}),"
            f" {counted(value('forbidden'), 'request')} forbidden,"
            f" {value('unreachable')} dropped as unreachable"
        )
        if self.slowest is not None:
            seconds, url = self.slowest
            text += f"; slowest robots.txt: {url} ({seconds:.2f} s)"
        return "\n".join([text, *filter(None, (line() for line in self.summary_lines))])
