"""The crawl variants compared in tests (this package, Scrapy's built-in middleware),
and what their crawls left."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator, Sequence
from functools import partial
from typing import Any

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from helpers.crawling import (
    CrawlResult,
    RecordingSpider,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
)
from helpers.mockserver import MockServer, RequestRecord
from scrapy_robotrules.crawl.compat import sleep

OBEY: dict[str, Any] = {"ROBOTSTXT_OBEY": True, "RETRY_ENABLED": False, "DOWNLOAD_TIMEOUT": 1.0}
"""Settings of every crawl that obeys robots.txt, whichever middleware does it."""


OURS: dict[str, Any] = {
    **OBEY,
    "ADDONS": {"scrapy_robotrules.Addon": 0},
    "ROBOTRULES_RETRY_DELAY": 0.2,
    "ROBOTRULES_UNREACHABLE_TIMEOUT": 5.0,
}
"""Crawls with this package, as its users turn it on, with short waits."""


BUILTIN: dict[str, Any] = dict(OBEY)
"""Crawls with Scrapy's own RobotsTxtMiddleware."""


PRIVATE = b"User-agent: *\nDisallow: /private\n"


def stat(result: CrawlResult[Any], key: str) -> Any:
    return result.stats.get(f"robotrules/{key}", 0)


def paths(result: CrawlResult[Any], urls: Sequence[str]) -> list[str]:
    """The path and query of each URL, sorted: what a test compares."""
    return sorted(url.split("/", 3)[3] for url in urls)


def robots_log(mockserver: MockServer, host: str) -> list[RequestRecord]:
    return mockserver.requests_for(host, "/robots.txt")


def gaps(records: Sequence[RequestRecord]) -> list[float]:
    """Seconds between consecutive arrivals at the server.

    Only for lower bounds that hold by cause (a retry timed from the answer
    to the fetch before); pacing is checked on the download slot
    (``helpers.slots``), since a late arrival shortens the next gap.
    """
    return [later.time - earlier.time for earlier, later in itertools.pairwise(records)]


class TimedSpider(RecordingSpider):
    """Requests each URL of ``plan`` that many seconds after the one before."""

    name = "timed"

    def __init__(self, plan: Sequence[tuple[float, str]] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = list(plan)

    async def start(self) -> AsyncIterator[Request]:
        for pause, url in self.plan:
            if pause:
                await sleep(pause)
            yield self.request(url)


class ChainSpider(RecordingSpider):
    """Requests each URL of ``chain`` once the one before was answered or failed.

    The order of events is then the crawl's own: a request goes only after
    the rules that decided the one before were in (or the decision failed).
    """

    name = "chain"

    def __init__(self, chain: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.chain = list(chain)

    def request(self, url: str) -> Request:
        return Request(url, callback=self.parse, errback=partial(self.failed, url))

    async def start(self) -> AsyncIterator[Request]:
        for request in self._next():
            yield request

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.crawled.append(response.url)
        yield from self._next()

    def failed(self, url: str, failure: Failure) -> Iterator[Request]:
        self.on_failure(url, failure)
        yield from self._next()

    def _next(self) -> Iterator[Request]:
        if self.chain:
            yield self.request(self.chain.pop(0))
