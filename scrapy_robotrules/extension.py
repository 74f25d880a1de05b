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
- The spider stays open while requests are parked or fetches run; a
  scheduler about to close (``JOBDIR`` crawls stopped mid-way) is handed
  the parked requests first, so they are saved with the rest.
- An INFO summary when the spider closes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured

from . import compat
from .manager import RobotsManager, RobotsTxtForbidden, RobotsTxtUnreachable

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["RobotRulesExtension"]

logger = logging.getLogger(__name__)

DECIDED = "robotrules_decided"
"""Request meta key: set when the request was decided at scheduling time.

``True`` when allowed; the exception to raise (``RobotsTxtForbidden`` or
``RobotsTxtUnreachable``) when dropped but let through to the downloader so
that its errback hears of it (the middleware raises it at once).
"""
OFFERED = "_robotrules_offered"
"""Request meta key: set once a request has been counted as offered."""
PARKED = "_robotrules_parked"
"""Request meta key: set once a request has been counted as parked."""


class RobotRulesExtension:
    """Keeps robots.txt crawl delays on the download slots; logs a summary at the end."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self.manager = RobotsManager.for_crawler(crawler)
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.request_scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def request_scheduled(self, request: Request, spider: Spider) -> None:
        """Decide ``request`` before it enters the scheduler, or park it; raise to keep it out."""
        manager = self.manager
        if request.meta.get(DECIDED) or not manager.checks(request):
            return
        if not request.meta.get(OFFERED):
            request.meta[OFFERED] = True
            manager.count("offered")
        try:
            decision = manager.decide_now(request)
        except RobotsTxtUnreachable as exc:
            self._drop(request, spider, exc)
            return
        if decision is None:
            if manager.park(request):
                if not request.meta.get(PARKED):
                    request.meta[PARKED] = True
                    manager.count("parked")
                raise IgnoreRequest("parked until robots.txt is fetched")
            return  # too many parked for this origin: the middleware waits instead
        if decision.allowed:
            manager.count("allowed")
            request.meta[DECIDED] = True
            return
        self._drop(request, spider, RobotsTxtForbidden(decision.reason))

    def _duplicate(self, request: Request) -> bool:
        """Whether a request about to be dropped is a duplicate the scheduler would filter.

        Asked of dropped requests only (asking records the request as seen):
        a duplicate goes on to the scheduler, to be counted as filtered once,
        not dropped again.
        """
        if request.dont_filter:
            return False
        scheduler = compat.scheduler(self.crawler)
        dupefilter = getattr(scheduler, "df", None)
        seen = getattr(dupefilter, "request_seen", None)
        return bool(seen(request)) if seen is not None else False

    def _drop(
        self, request: Request, spider: Spider, exc: RobotsTxtForbidden | RobotsTxtUnreachable
    ) -> None:
        """Keep ``request`` out of the scheduler, or let its errback hear why."""
        if request.errback is not None:
            # The spider wants to know: the middleware drops it (and counts
            # it) at once, with the same exception Scrapy's own middleware
            # would have raised; a duplicate is filtered by the scheduler first.
            request.meta[DECIDED] = exc
            return
        if self._duplicate(request):
            return  # the scheduler filters it and counts it so
        self.manager.record_drop(request, exc)
        self.crawler.signals.send_catch_log(
            signal=signals.request_dropped, request=request, spider=spider
        )
        raise exc

    def spider_idle(self, spider: Spider) -> None:
        if self.manager.pending():
            raise DontCloseSpider

    def spider_opened(self, spider: Spider) -> None:
        self._hand_parked_to_closing_scheduler()
        if not self.manager.config.crawl_delay:
            return
        # Connected now, after every component connected its own handlers:
        # AutoThrottle adjusts slot.delay in its response_downloaded handler,
        # and this one, called after it, puts the floor back.
        connect = self.crawler.signals.connect
        connect(self.request_reached_downloader, signal=signals.request_reached_downloader)
        connect(self.response_downloaded, signal=signals.response_downloaded)

    def request_reached_downloader(self, request: Request, **kwargs: Any) -> None:
        # The slot exists now (a new one has the default delay) and its
        # queue has not been processed yet.
        self.manager.apply_crawl_delay(request)

    def response_downloaded(self, request: Request, **kwargs: Any) -> None:
        self.manager.apply_crawl_delay(request)

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
        logger.info(self.manager.summary(), extra={"spider": spider})
