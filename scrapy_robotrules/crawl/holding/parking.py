"""Parking: requests whose origin has no rules yet wait outside the scheduler and downloader.

SPEC 8 ("requests are held, not dropped"), without holding a
``CONCURRENT_REQUESTS`` place: a parked request waits on its origin's
fetch, then is offered again through ``engine.crawl`` and decided there.
Past ``ROBOTRULES_MAX_WAITING_PER_ORIGIN`` parked requests an origin's
others wait on disk (:mod:`.holding.overflow`). When the crawl closes, parked
requests are saved with the scheduler's queue (``JOBDIR``, or a shared queue
that outlives the crawler) or counted lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twisted.internet.defer import Deferred

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.exceptions import RobotsTxtNotFetched
from scrapy_robotrules.crawl.holding.overflow import DiskOverflow, OverflowDirectory
from scrapy_robotrules.crawl.requestmeta import OFFERED, PARKED, origin_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotrules.crawl.config.settings import RobotRulesConfig
    from scrapy_robotrules.crawl.fetching.origins import Origins, OriginState
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.stores import Entry

__all__ = ["Parking"]


class Parking:
    """The requests of one crawler parked until their origin's robots.txt fetch ends."""

    def __init__(
        self,
        crawler: Crawler,
        config: RobotRulesConfig,
        reporter: Reporter,
        origins: Origins,
        closing: Callable[[], bool],
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.reporter = reporter
        self.origins = origins
        """Per-origin state: the fetch a parked request waits on."""
        self.closing = closing
        """Whether the crawl is stopping or its spider closing: nothing is parked then."""
        self._parked: dict[int, Request] = {}
        """Parked requests by the id of their waiter."""
        self._scheduler_closed = False
        self._overflow: dict[str, DiskOverflow] = {}
        """Per origin, parked requests beyond ROBOTRULES_MAX_WAITING_PER_ORIGIN, on disk."""
        self.overflow_dir = OverflowDirectory()
        settings = crawler.settings
        self._saves_at_close = bool(settings.get("JOBDIR")) or settings.getbool("SCHEDULER_PERSIST")
        """Whether requests still waiting when the crawl closes are saved (else lost, counted):
        in JOBDIR, or in a shared queue that outlives this crawler (scrapy-redis's
        ``SCHEDULER_PERSIST``), where another crawler of the fleet takes them."""

    def __len__(self) -> int:
        return len(self._parked)

    def park(self, request: Request) -> bool:
        """Hold ``request`` until its origin's robots.txt fetch ends, then offer it again.

        Call once the decider found no rules at hand (which started the fetch).
        The request goes back through ``engine.crawl`` once the fetch ends or
        the origin's unreachable timeout passes. Past
        ``ROBOTRULES_MAX_WAITING_PER_ORIGIN`` parked requests for the origin, it
        waits on disk (:mod:`.overflow`). ``False`` (not parked) when there is no
        fetch to wait on, or once the crawl is closing: see :meth:`hand_over`.
        """
        state = self.origins.get(origin_for(request))
        if state is None or self._scheduler_closed or self.closing():
            return False
        if state.parked >= self.config.max_waiting_per_origin:
            self._overflow_request(state, request)
            return True
        waiter: Deferred[Entry | None] = Deferred()
        state.waiters.append(waiter)
        state.parked += 1
        self._parked[id(waiter)] = request
        self.reporter.waiting(1)

        def offer_again(_: Entry | None) -> None:
            state.parked -= 1
            self.reporter.waiting(-1)
            if self._parked.pop(id(waiter), None) is not None:
                self._offer(request)
            # else: taken by a closing scheduler

        waiter.addCallback(offer_again)
        return True

    def _overflow_request(self, state: OriginState, request: Request) -> None:
        overflow = self._overflow.get(state.name)
        if overflow is None:
            overflow = self._overflow[state.name] = self.overflow_dir.queue(
                self.crawler, state.name
            )
            waiter: Deferred[Entry | None] = Deferred()
            state.waiters.append(waiter)
            waiter.addCallback(lambda _: self._drain_overflow(state.name))
        if not overflow.push(request):
            self.reporter.inc("parked/memory")
        self.reporter.waiting(1)
        self.reporter.stats.max_value("robotrules/parked/disk/max", overflow.on_disk)

    def _drain_overflow(self, origin: str) -> None:
        overflow = self._overflow.pop(origin, None)
        if overflow is None:
            return  # taken by a closing scheduler
        requests = overflow.drain()
        self.reporter.waiting(-len(requests))
        for request in requests:
            self._offer(request)

    def _offer(self, request: Request) -> None:
        """Offer a parked request to the scheduler again (through the door: decided there)."""
        engine = compat.engine(self.crawler)
        if engine is None or engine.spider is None or self._scheduler_closed:
            # The scheduler is gone: nothing can take it any more.
            self.reporter.lost([request])
            return
        engine.crawl(request)

    def hand_over(self, request: Request) -> None:
        """What becomes of a request offered while the crawl closes, its origin's rules unknown.

        With ``JOBDIR`` it goes into the scheduler undecided, to be saved with
        the rest and decided when the crawl resumes (counted ``saved_at_close``);
        without, it is counted ``lost_at_close`` and raised out as
        :class:`RobotsTxtNotFetched`.
        """
        if self._saves_at_close:
            self._saved([request])
            return
        self.reporter.lost([request])
        raise RobotsTxtNotFetched(origin_for(request))

    def _saved(self, requests: list[Request]) -> None:
        for request in requests:
            # Offered afresh when the crawl resumes: counted there again.
            request.meta.pop(OFFERED, None)
            request.meta.pop(PARKED, None)
        self.reporter.count("saved_at_close", len(requests))

    def pending(self) -> bool:
        """Whether requests are parked (in memory or on disk) or robots.txt fetches run."""
        return bool(self._parked) or bool(self._overflow) or self.origins.fetching()

    def take_parked(self) -> list[Request]:
        """Every parked request, no longer parked: for a scheduler about to close.

        With ``JOBDIR`` they are returned, to be saved with the scheduler's
        queue (``saved_at_close``); without, there is nowhere to keep them:
        they are counted (``lost_at_close``), logged, and none is returned.
        """
        requests = list(self._parked.values())
        self._parked.clear()
        for origin in list(self._overflow):
            requests += self._overflow.pop(origin).drain()
        # No more parking: a request parked now would outlive the scheduler.
        self._scheduler_closed = True
        if self._saves_at_close:
            self._saved(requests)
            return requests
        self.reporter.lost(requests)
        return []
