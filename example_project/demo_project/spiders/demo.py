"""The demo spider: follows every link, and says which pages robots.txt kept it from.

Run from ``example_project/``::

    scrapy crawl demo                             # the local site (demo_project.localsite)
    scrapy crawl demo -a precedence=first-match   # the same, another precedence mode
    scrapy crawl demo -a url=https://example.com  # a real site instead
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any
from urllib.parse import urlparse

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import Response, TextResponse
from twisted.python.failure import Failure

from demo_project.localsite import HOSTS, LocalSite


class DemoSpider(Spider):
    """Crawls the local site, or the site of ``-a url=...``, following links within it.

    ``-a precedence=MODE`` becomes the ``robotrules_precedence`` attribute,
    which overrides ``ROBOTRULES_PRECEDENCE`` for this spider.
    """

    name = "demo"

    def __init__(
        self, url: str | None = None, precedence: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.url = url
        if precedence is not None:
            self.robotrules_precedence = precedence
        self.allowed_domains = [urlparse(url).hostname or url] if url else ["localhost"]
        self.site: LocalSite | None = None
        self.crawled: list[str] = []
        self.not_crawled: list[str] = []
        self.requested: Counter[str] = Counter()
        """Requests made per URL: a page linked from two pages is requested twice."""

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> DemoSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        if spider.url is None:
            # The local site is on 127.0.0.1: never send it through an http_proxy of the
            # environment (the site is its own proxy, given in each request's meta).
            crawler.settings.set("HTTPPROXY_ENABLED", False, priority="spider")
        return spider

    async def start(self) -> AsyncIterator[Request]:
        if self.url is not None:
            yield self.visit(self.url)
            return
        self.site = LocalSite()
        for host in HOSTS:
            yield self.visit(self.site.url(host))

    def visit(self, url: str) -> Request:
        # The local site answers as a proxy too: *.localhost needs no resolver (localsite.py).
        meta = {"proxy": self.site.proxy} if self.site is not None else {}
        request = Request(url, callback=self.parse, meta=meta)
        self.requested[request.url] += 1
        return request.replace(errback=partial(self.refused, request.url))

    def parse(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any] | Request]:
        self.crawled.append(response.url)
        self.logger.info("crawled %s", response.url)
        if not isinstance(response, TextResponse):
            return
        yield {"url": response.url, "title": response.css("title::text").get()}
        for link in response.css("a::attr(href)").getall():
            yield self.visit(response.urljoin(link))

    def refused(self, url: str, failure: Failure) -> None:
        """A request that got no response: forbidden by robots.txt, or an error."""
        self.not_crawled.append(url)
        self.logger.info("not crawled %s: %s", url, failure.getErrorMessage())

    async def closed(self, reason: str) -> None:
        # Scrapy drops a request for a URL already requested, but robots.txt
        # decides every request first: scrapy-robotrules' "requests forbidden"
        # counts requests, a URL requested twice twice. Pages are counted once.
        not_crawled = sorted(set(self.not_crawled))
        requests = sum(self.requested[url] for url in not_crawled)
        self.logger.info(
            "%d pages crawled; %d pages not crawled, in %d requests (a page linked twice is"
            " requested twice): %s",
            len(self.crawled),
            len(not_crawled),
            requests,
            " ".join(self._times(url) for url in not_crawled) or "-",
        )
        if self.site is not None:
            self.site.stop()

    def _times(self, url: str) -> str:
        times = self.requested[url]
        return url if times == 1 else f"{url} ({times} requests)"
