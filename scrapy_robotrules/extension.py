"""The extension: what robots.txt handling needs from Scrapy's signals.

- Crawl-delay and Request-rate as a floor under each origin's download slot
  delay, put back whenever the slot is (re)created and after every response,
  where AutoThrottle sets ``slot.delay`` (its ``response_downloaded``
  handler). This handler is connected when the spider opens, so after
  AutoThrottle's (connected when it is built): it runs later and wins.
- An INFO summary when the spider closes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

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
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def spider_opened(self, spider: Spider) -> None:
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

    def spider_closed(self, spider: Spider, reason: str) -> None:
        logger.info(self.manager.summary(), extra={"spider": spider})
