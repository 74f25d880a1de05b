"""The crawl variants compared in tests (this package, Scrapy's built-in middleware),
and what their crawls left."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Sequence
from typing import Any

from scrapy import Request

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
