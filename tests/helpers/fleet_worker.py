"""One crawler of a fleet, as its own process: ``python fleet_worker.py SETTINGS_JSON OUTPUT``.

Crawls the start URLs in ``SETTINGS_JSON`` (following links) with the
package enabled and the settings given, every host name resolved to the
test server, and writes what happened to ``OUTPUT`` as JSON: the URLs
crawled, the URLs robots.txt forbade (with the reason), the URLs dropped
(``request_dropped``), the crawl's stats. With ``"shared_queue": true`` in
the file, it is a scrapy-redis spider (see ``SharedQueueSpider``); with
``"stop_when_parked": N``, the crawl is stopped once N requests wait for
their robots.txt.
Several of these run at once in the fleet tests. Each fetch lease it finds
taken is written, as it happens, to ``OUTPUT`` with the suffix ``.waiting``.
Each fleet-wide turn it books (``turns``: before the call, the wait the
store gave, after the call) and the time each paced request was let go
(``released``), wall-clock seconds, are in ``OUTPUT`` by origin: the test
checks the pace from them, not from when requests reached the server.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, cast

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler, CrawlerProcess
from scrapy.utils.defer import deferred_from_coro
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.spiders import RedisMixin
from twisted.internet.task import LoopingCall

from scrapy_robotrules.crawl.exceptions import RobotsTxtForbidden
from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.crawl.requestmeta import origin_for
from tests.helpers.crawling import RecordingSpider


class FleetSpider(RecordingSpider):
    """Follows every link, as each crawler of the fleet does."""

    name = "fleet"

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(start_urls, follow=True, **kwargs)


class SharedQueueSpider(RedisMixin, FleetSpider):  # type: ignore[misc]
    """A scrapy-redis fleet crawler: start URLs and requests from Redis, shared by the fleet.

    As scrapy-redis's ``RedisSpider``: it takes start URLs from the Redis
    list ``fleet:start_urls`` (a few at a time, when idle) and waits for
    more while idle, until ``MAX_IDLE_TIME_BEFORE_CLOSE``. The queue stores
    requests, so their callbacks must be spider methods (no errback with a
    bound argument as ``RecordingSpider`` gives): a dropped request is known
    by the ``request_dropped`` signal, a failed one by the stats.
    """

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SharedQueueSpider:
        spider = cast("SharedQueueSpider", super().from_crawler(crawler, *args, **kwargs))
        spider.setup_redis(crawler)
        return spider

    def make_request_from_data(self, data: bytes) -> Request:
        """A start URL as any other request, through the shared duplicate filter.

        scrapy-redis makes its start requests ``dont_filter``: a home page
        also linked from another site would be crawled twice.
        """
        return self.request(json.loads(data)["url"])

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(start_urls, **kwargs)
        self.filtered: list[str] = []
        """URLs the shared duplicate filter refused (``dropped`` lists them too)."""

    def request(self, url: str) -> Request:
        return Request(url, callback=self.parse)


class CountingDupeFilter(RFPDupeFilter):  # type: ignore[misc]
    """scrapy-redis's shared duplicate filter, counting what it filters as Scrapy's own does.

    scrapy-redis only logs a filtered request; Scrapy's ``RFPDupeFilter``
    also counts it in ``dupefilter/filtered``, which the accounting of the
    fleet test adds up.
    """

    def log(self, request: Request, spider: Spider) -> None:
        super().log(request, spider)
        assert spider.crawler.stats is not None
        spider.crawler.stats.inc_value("dupefilter/filtered")
        # Not isinstance: Scrapy imports this module by name, apart from __main__.
        filtered = getattr(spider, "filtered", None)
        if isinstance(filtered, list):
            filtered.append(request.url)


def report_lease_waits(crawler: Crawler, path: Path) -> None:
    """Append to ``path`` the origin of each fetch lease this crawler finds taken, at once.

    The test reads it to know that a crawler waits on another's fetch: the
    only sign of it outside this process (a refused lease leaves no trace in
    the store).
    """
    fleet = RobotsManager.for_crawler(crawler).fleet
    if fleet is None:
        return
    lease = fleet.lease

    def reporting_lease(origin: str, owner: str, seconds: float) -> bool | None:
        taken = lease(origin, owner, seconds)
        if taken is False:
            with path.open("a") as log:
                log.write(origin + "\n")
        return taken

    fleet.lease = reporting_lease  # type: ignore[method-assign]


def record_turns(
    crawler: Crawler, turns: dict[str, list[list[float]]], released: dict[str, list[float]]
) -> None:
    """Record each fleet-wide turn booked, and when each paced request was let go, by origin."""
    manager = RobotsManager.for_crawler(crawler)
    fleet, politeness = manager.fleet, manager.politeness
    if fleet is None:
        return
    reserve, pace = fleet.reserve, politeness.pace

    def recording_reserve(origin: str, interval: float) -> float | None:
        before = time.time()
        wait = reserve(origin, interval)
        if wait is not None:
            turns[origin].append([before, wait, time.time()])
        return wait

    def recording_pace(
        request: Request, agent: str | None = None
    ) -> Coroutine[Any, Any, None] | None:
        turn = pace(request, agent)
        if turn is None:
            return None
        waited = turn

        async def recorded() -> None:
            origin = origin_for(request)
            booked = len(turns[origin])
            await waited
            if len(turns[origin]) > booked:  # it booked a turn (and waited for it)
                released[origin].append(time.time())

        return recorded()

    fleet.reserve = recording_reserve  # type: ignore[method-assign]
    politeness.pace = recording_pace  # type: ignore[method-assign]


def stop_when_parked(crawler: Crawler, count: int) -> None:
    """Stop the crawl (as Ctrl-C does) once ``count`` requests have been parked."""

    def check() -> None:
        assert crawler.stats is not None
        if crawler.stats.get_value("robotrules/parked", 0) >= count:
            watch.stop()
            if hasattr(crawler, "stop_async"):
                deferred_from_coro(crawler.stop_async())
            else:  # Scrapy before 2.14
                crawler.stop()

    watch = LoopingCall(check)
    watch.start(0.05)


def main(settings_file: str, output: str) -> None:
    config = json.loads(Path(settings_file).read_text())
    settings = {
        "ADDONS": {"scrapy_robotrules.Addon": 0},
        "ROBOTSTXT_OBEY": True,
        "DNS_RESOLVER": "tests.helpers.mockserver.LoopbackResolver",
        "TELNETCONSOLE_ENABLED": False,
        "HTTPPROXY_ENABLED": False,
        "LOG_LEVEL": "INFO",
        **config["settings"],
    }
    process = CrawlerProcess(settings)
    spider_class = SharedQueueSpider if config.get("shared_queue") else FleetSpider
    crawler = process.create_crawler(spider_class)
    waits = Path(output).with_suffix(".waiting")
    crawler.signals.connect(
        lambda: report_lease_waits(crawler, waits), signal=signals.spider_opened, weak=False
    )
    turns: dict[str, list[list[float]]] = defaultdict(list)
    released: dict[str, list[float]] = defaultdict(list)
    crawler.signals.connect(
        lambda: record_turns(crawler, turns, released), signal=signals.spider_opened, weak=False
    )
    if config.get("stop_when_parked"):
        crawler.signals.connect(
            lambda: stop_when_parked(crawler, config["stop_when_parked"]),
            signal=signals.spider_opened,
            weak=False,
        )
    process.crawl(crawler, start_urls=config["start_urls"])
    process.start()
    spider = crawler.spider
    assert isinstance(spider, FleetSpider)
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float))}
    failures = spider.failures
    result = {
        "crawled": spider.crawled,
        "dropped": spider.dropped,
        "filtered": getattr(spider, "filtered", []),
        "forbidden": {u: e.reason for u, e in failures if isinstance(e, RobotsTxtForbidden)},
        "failed": {u: repr(e) for u, e in failures if not isinstance(e, RobotsTxtForbidden)},
        "stats": stats,
        "finish_reason": crawler.stats.get_value("finish_reason"),
        "turns": turns,
        "released": released,
    }
    Path(output).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
