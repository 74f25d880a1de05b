"""The extension: what robots.txt handling needs from Scrapy's signals.

- Crawl-delay and Request-rate as a floor under each origin's download slot
  delay, put back whenever the slot is (re)created and after every response,
  where AutoThrottle sets ``slot.delay`` (its ``response_downloaded``
  handler). This handler is connected when the spider opens, so after
  AutoThrottle's (connected when it is built): it runs later and wins.
- Decisions at scheduling time: :class:`.gate.Gate` is put in front of
  ``engine.crawl`` when the spider opens, before any request is scheduled;
  the requests it dropped are told of on the loop's next turn, or when the
  spider idles or closes.
- The spider stays open while requests are parked or fetches run; a
  scheduler about to close (``JOBDIR`` crawls stopped mid-way) is handed
  the parked requests first, so they are saved with the rest.
- The ``robotstxt_denied`` finish reason where Scrapy has it (reporting/startdenied.py).
- An INFO summary when the spider closes.

SPEC 6 (delays kept on the slots) and 8 (requests parked while robots.txt is fetched).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.gate import Gate
from scrapy_robotrules.crawl.manager import RobotsManager

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
        self.crawler = crawler
        self.manager = RobotsManager.for_component(crawler)
        self.reporter = self.manager.reporter
        self.gate = Gate(crawler, self.manager)
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def spider_idle(self, spider: Spider) -> None:
        # A request gone back to the engine here is in the scheduler: not idle.
        self.gate.settle()
        if self.manager.pending():
            raise DontCloseSpider
        reason = self.reporter.starts.finish_reason()  # reporting/startdenied.py
        if reason is not None:
            raise CloseSpider(reason)

    def spider_opened(self, spider: Spider) -> None:
        compat.guard_crawl(self.crawler, self.gate.guard)
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
        self.gate.settle(closing=True)
        self.reporter.warn_lost()
        logger.info(self.manager.summary(), extra={"spider": spider})
