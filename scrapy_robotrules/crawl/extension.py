"""The extension: what robots.txt handling needs from Scrapy's signals.

- Crawl-delay and Request-rate as a floor under each origin's download slot
  delay, put back whenever the slot is (re)created and after every response,
  where AutoThrottle sets ``slot.delay`` (its ``response_downloaded``
  handler). This handler is connected when the spider opens, so after
  AutoThrottle's (connected when it is built): it runs later and wins.
- Whether requests are decided as they are scheduled: one WARNING if the
  crawl's ``SCHEDULER`` is not :class:`.RobotRulesScheduler` (set up by hand
  without it, every request waits for robots.txt in the downloader instead).
- The ``robotstxt_denied`` finish reason where Scrapy has it (reporting/startdenied.py).
- An INFO summary when the spider closes.

SPEC 6 (delays kept on the slots).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider
from scrapy.utils.misc import load_object

from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.crawl.scheduler import is_robots_scheduler

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
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def spider_idle(self, spider: Spider) -> None:
        reason = self.reporter.starts.finish_reason()  # reporting/startdenied.py
        if reason is not None:
            raise CloseSpider(reason)

    def spider_opened(self, spider: Spider) -> None:
        self._warn_unless_scheduling()
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

    def _warn_unless_scheduling(self) -> None:
        try:
            scheduler = load_object(self.crawler.settings["SCHEDULER"])
        except Exception:
            return
        if is_robots_scheduler(scheduler):
            return
        logger.warning(
            "SCHEDULER is not scrapy_robotrules.RobotRulesScheduler: requests wait for "
            "their origin's robots.txt in the downloader, each holding a "
            "CONCURRENT_REQUESTS place meanwhile. Enable the add-on, or set SCHEDULER "
            "to it (and ROBOTRULES_SCHEDULER to the scheduler it is to wrap).",
            extra={"spider": self.crawler.spider},
        )

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self.reporter.warn_lost()
        logger.info(self.manager.summary(), extra={"spider": spider})
