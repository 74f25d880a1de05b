"""The spider of the test crawls: requests its start URLs and records what became of each.

Free of Twisted's reactor and of pytest (only ``twisted.python.failure``, for
typing): crawls without a reactor use it where importing
``twisted.internet.reactor`` is forbidden; :mod:`helpers.crawling` hands it
to the in-process crawls, and the fleet's workers subclass it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from scrapy import Request, Spider, signals
from scrapy.http import Response, TextResponse

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

__all__ = ["RecordingSpider"]


class RecordingSpider(Spider):
    """Requests ``start_urls`` and records the outcome of every request.

    ``crawled``: response URLs that reached the callback. ``failures``: the
    requested URL and exception of each request that failed, including
    ``IgnoreRequest`` (Scrapy drops those silently without an errback).
    ``dropped``: URLs the scheduler refused. With ``follow``, the links of
    every page are followed too.
    """

    name = "recording"

    def __init__(self, start_urls: Sequence[str] = (), follow: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.start_urls = list(start_urls)
        self.follow = follow
        self.crawled: list[str] = []
        self.failures: list[tuple[str, BaseException]] = []
        self.dropped: list[str] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> RecordingSpider:
        # ``crawlers=[]`` hands the crawler to the test (to watch its stats, or stop it).
        crawlers = kwargs.pop("crawlers", None)
        if crawlers is not None:
            crawlers.append(crawler)
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.on_dropped, signal=signals.request_dropped)
        return spider

    def request(self, url: str) -> Request:
        """A request whose outcome, good or bad, is recorded."""
        return Request(url, callback=self.parse, errback=partial(self.on_failure, url))

    async def start(self) -> AsyncIterator[Request]:
        for url in self.start_urls:
            yield self.request(url)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.crawled.append(response.url)
        if self.follow and isinstance(response, TextResponse):
            for href in response.css("a::attr(href)").getall():
                yield self.request(response.urljoin(href))

    def on_failure(self, url: str, failure: Failure) -> None:
        self.failures.append((url, cast("BaseException", failure.value)))

    def on_dropped(self, request: Request) -> None:
        self.dropped.append(request.url)
