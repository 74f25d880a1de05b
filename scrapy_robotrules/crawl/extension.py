"""The extension: what robots.txt handling needs from Scrapy's signals.

- Crawl-delay and Request-rate as a floor under each origin's download slot
  delay, put back whenever the slot is (re)created and after every response,
  where AutoThrottle sets ``slot.delay`` (its ``response_downloaded``
  handler). This handler is connected when the spider opens, so after
  AutoThrottle's (connected when it is built): it runs later and wins.
- Decisions at scheduling time (``request_scheduled``): a request whose
  origin has rules is let into the scheduler or dropped right there; one
  whose origin has none yet is *parked* outside the scheduler and the
  downloader while its robots.txt is fetched, then offered again. Parked
  requests hold no ``CONCURRENT_REQUESTS`` slot, so a slow robots.txt
  delays its own site only. The downloader middleware stays the final
  gate for requests that never pass the scheduler.
- A request dropped there without an errback is told of (``request_dropped``)
  on the loop's next turn: one that has an errback by then goes on to the
  downloader middleware, which raises why, so the errback hears it.
  Scrapy's shell gives its ``fetch()`` request the errback it waits on only
  once ``engine.crawl()`` has returned.
- The spider stays open while requests are parked or fetches run; a
  scheduler about to close (``JOBDIR`` crawls stopped mid-way) is handed
  the parked requests first, so they are saved with the rest.
- An INFO summary when the spider closes.

SPEC 6 (delays kept on the slots) and 8 (requests held while robots.txt is fetched).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured

from . import compat
from .carried import DECIDED, OFFERED, PARKED
from .exceptions import RobotsTxtForbidden, RobotsTxtUnreachable
from .manager import RobotsManager

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["RobotRulesExtension"]

logger = logging.getLogger(__name__)


class RobotRulesExtension:
    """Keeps robots.txt crawl delays on the download slots; logs a summary at the end."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self.manager = RobotsManager.for_crawler(crawler)
        self.report = self.manager.report
        self._dropped: list[tuple[Request, RobotsTxtForbidden | RobotsTxtUnreachable]] = []
        """Requests kept out of the scheduler, not yet told of (see ``_settle``)."""
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.request_scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def request_scheduled(self, request: Request, **kwargs: Any) -> None:
        """Decide ``request`` before it enters the scheduler, or park it; raise to keep it out.

        Counted once per URL a request lineage reaches: a parked request
        offered again, or a retry of a URL already decided, is not counted
        again; a redirect to another URL is a new offer, decided for its own
        origin and path. (``**kwargs``: the signal's dispatcher then passes
        its arguments on without sorting out those not asked for, once per
        offer.)
        """
        manager, report, verdicts = self.manager, self.report, self.manager.verdicts
        meta = request.meta
        url = request.url
        if meta.get(OFFERED) != url:
            if manager.allowed_again(request):  # the same URL offered again, same rules
                meta[OFFERED] = meta[DECIDED] = url
                report.count("offered")
                report.count("allowed")
                return
            meta[OFFERED] = url
            report.count("offered")
            if not manager.checks(request):
                report.count("unchecked")
                return
        elif meta.get(DECIDED) is not None or not manager.checks(request):
            return  # decided (or unchecked) for this URL already
        try:
            decision = manager.decide_now(request)
        except RobotsTxtUnreachable as exc:
            if verdicts.stops(request, exc):
                self._drop(request, exc)
            else:
                meta[DECIDED] = url
            return
        if decision is None:
            if manager.park(request):
                if meta.get(PARKED) != url:
                    meta[PARKED] = url
                    report.count("parked")
                raise IgnoreRequest("parked until robots.txt is fetched")
            manager.hand_over(request)  # the crawl is closing
            return
        if decision.allowed:
            report.count("allowed")
            meta[DECIDED] = url
            if verdicts.trail is not None:
                verdicts.allowed(request, decision)
            return
        forbidden = RobotsTxtForbidden(decision.reason)
        if verdicts.stops(request, forbidden, decision):
            self._drop(request, forbidden)
        else:
            meta[DECIDED] = url  # shadow mode: let through, counted

    def _drop(self, request: Request, exc: RobotsTxtForbidden | RobotsTxtUnreachable) -> None:
        """Count and log the drop; keep ``request`` out of the scheduler, or tell its errback."""
        self.report.record_drop(request, exc)
        if request.errback is not None:
            # The spider wants to know: the middleware raises the same
            # exception Scrapy's own middleware would have, at once.
            request.meta[DECIDED] = exc
            return
        # Whoever called engine.crawl() may give it an errback before
        # returning to the loop: settled on the loop's next turn.
        if not self._dropped:
            compat.call_later(0, self._settle)
        self._dropped.append((request, exc))
        raise exc

    def _settle(self, *, closing: bool = False) -> None:
        """Tell of the requests kept out of the scheduler since the loop's last turn.

        One given an errback meanwhile goes back to the engine, as if it had
        had it all along: the middleware raises why (counted already). The
        others are dropped (``request_dropped``), as are all once the crawl closes.
        """
        dropped, self._dropped = self._dropped, []
        engine = compat.engine(self.crawler)
        if closing or engine is None or engine.spider is None:
            engine = None
        for request, exc in dropped:
            if engine is not None and request.errback is not None:
                request.meta[DECIDED] = exc
                engine.crawl(request)
                continue
            self.crawler.signals.send_catch_log(
                signal=signals.request_dropped, request=request, spider=self.crawler.spider
            )

    def spider_idle(self, spider: Spider) -> None:
        # A request gone back to the engine here is in the scheduler: not idle.
        self._settle()
        if self.manager.pending():
            raise DontCloseSpider

    def spider_opened(self, spider: Spider) -> None:
        self._hand_parked_to_closing_scheduler()
        if not self.manager.config.crawl_delay:
            return
        # Connected no sooner than now, after every component connected its
        # own handlers: AutoThrottle adjusts slot.delay in its
        # response_downloaded handler, and this one, called after it, puts
        # the floor back. Not before any delay may be asked: until then
        # they would keep nothing, at a cost per page.
        self.manager.politeness.when_delays(self._keep_floors)

    def _keep_floors(self) -> None:
        connect = self.crawler.signals.connect
        connect(self.request_reached_downloader, signal=signals.request_reached_downloader)
        connect(self.response_downloaded, signal=signals.response_downloaded)

    def request_reached_downloader(self, request: Request, **kwargs: Any) -> None:
        # The slot exists now (a new one has the default delay) and its
        # queue has not been processed yet.
        self.manager.politeness.apply_crawl_delay(request)

    def response_downloaded(self, request: Request, **kwargs: Any) -> None:
        self.manager.politeness.apply_crawl_delay(request)

    def _hand_parked_to_closing_scheduler(self) -> None:
        # No signal comes between "closing spider" and the scheduler's close:
        # wrap that close, so a crawl stopped with requests parked (JOBDIR)
        # saves them in its queue like every other pending request.
        scheduler = compat.scheduler(self.crawler)
        if scheduler is None:
            return
        manager = self.manager

        def hand_parked() -> None:
            for request in manager.take_parked():
                scheduler.enqueue_request(request)

        compat.on_scheduler_close(scheduler, hand_parked)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self._settle(closing=True)
        self.report.warn_lost()
        logger.info(self.manager.summary(), extra={"spider": spider})
