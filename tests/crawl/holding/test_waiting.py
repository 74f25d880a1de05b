"""Waiting for robots.txt in real crawls: one fetch per origin, through the engine,
redirects (SPEC 8).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler

from scrapy_robotrules import Outcome
from scrapy_robotrules.crawl.manager import RobotsManager
from tests.helpers.crawling import (
    NO_RESOLVER,
    RecordingSpider,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    not_reactorless,
    release_when,
    run_spider,
    when,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import (
    OURS,
    PRIVATE,
    robots_log,
    stat,
)

CRAWL_TESTS = True
"""Run under both reactors in CI, the manager tests without a server too."""


# Waiting for robots.txt.


@async_test
async def test_every_request_waiting_for_robots_txt_gets_its_decision(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("site.test", Reply(hang=True), Reply(body=PRIVATE))
    public = [mockserver.url("site.test", f"/page/{n}") for n in range(10)]
    private = [mockserver.url("site.test", f"/private/{n}") for n in range(10)]
    crawler: list[Crawler] = []

    def all_waiting() -> bool:
        return bool(crawler) and crawler[0].stats.get_value("robotrules/parked", 0) == 20

    released = when(all_waiting, partial(mockserver.release, "site.test"))
    result = await run_spider(
        RecordingSpider, OURS, start_urls=[*private, *public], crawlers=crawler
    )
    assert released[0]
    assert sorted(result.crawled) == sorted(public)
    assert sorted(result.ignored) == sorted(private)
    assert len(robots_log(mockserver, "site.test")) == 1
    assert stat(result, "waiting/max") >= 10
    assert (stat(result, "allowed"), stat(result, "forbidden")) == (10, 10)


@async_test
async def test_one_fetch_per_origin_and_origins_do_not_wait_for_each_other(
    mockserver: MockServer,
) -> None:
    # slow.test's robots.txt is answered once fast.test's pages were all fetched.
    mockserver.set_robots("slow.test", Reply(hang=True), Reply(body=PRIVATE))
    mockserver.set_robots("fast.test", Reply(body=PRIVATE))
    slow = [mockserver.url("slow.test", f"/{n}") for n in range(3)]
    fast = [mockserver.url("fast.test", f"/{n}") for n in range(3)]
    released = release_when(mockserver, "fast.test", 3, partial(mockserver.release, "slow.test"))
    result = await run_spider(RecordingSpider, OURS, start_urls=[*slow, *fast])
    assert released[0], "fast.test waited for slow.test's robots.txt"
    assert sorted(result.crawled) == sorted(slow + fast)
    assert len(robots_log(mockserver, "slow.test")) == 1
    assert len(robots_log(mockserver, "fast.test")) == 1


@not_reactorless(NO_RESOLVER)
@async_test
async def test_the_robots_request_uses_the_engine_and_the_triggers_slot(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("site.test", Reply(body=PRIVATE))
    reached: list[Request] = []

    class SlotSpider(RecordingSpider):
        name = "slots"

        @classmethod
        def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SlotSpider:
            spider = super().from_crawler(crawler, *args, **kwargs)
            assert isinstance(spider, SlotSpider)
            crawler.signals.connect(spider.on_reached, signal=signals.request_reached_downloader)
            return spider

        def on_reached(self, request: Request) -> None:
            reached.append(request)

        async def start(self) -> AsyncIterator[Request]:
            url = mockserver.url("site.test", "/page")
            meta = {"download_slot": "shared", "proxy": None}
            yield Request(url, meta=meta, callback=self.parse)

    await run_spider(SlotSpider, OURS)
    robots = [r for r in reached if r.url.endswith("/robots.txt")]
    assert len(robots) == 1
    meta = robots[0].meta
    assert meta["download_slot"] == "shared"
    assert "proxy" in meta
    assert meta["proxy"] is None
    assert meta["dont_obey_robotstxt"] is True
    assert robots[0].priority >= 1000


# What each status means (SPEC 8).


@async_test
async def test_redirects_are_followed_five_times_to_any_host(mockserver: MockServer) -> None:
    hops = ["moved.test", "hop1.test", "hop2.test", "hop3.test", "hop4.test", "final.test"]
    for here, there in itertools.pairwise(hops):
        mockserver.set_robots(here, Reply(301, redirect_to=mockserver.url(there, "/robots.txt")))
    mockserver.set_robots("final.test", Reply(body=PRIVATE))
    urls = [mockserver.url("moved.test", p) for p in ("/public", "/private")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]
    assert stat(result, "response_status_count/301") == 5
    assert stat(result, "response_status_count/200") == 1
    assert stat(result, "request_count") == 6
    entry = RobotsManager.for_crawler(result.crawler).db.entry(urls[0])
    assert entry is not None
    assert entry.url == mockserver.url("final.test", "/robots.txt")
    # One fetch, its six requests: the summary says both, as the stats count them.
    [summary] = result.messages("robots.txt: files kept", logging.INFO)
    line, _, slowest = summary.partition("; slowest robots.txt: ")
    assert line == (
        "robots.txt: files kept for 1 origin, 1 fetch (6 requests), 1 request forbidden,"
        " 0 dropped as unreachable"
    )
    assert slowest.startswith(f"{mockserver.url('moved.test', '/robots.txt')} (")


@async_test
async def test_a_redirect_to_another_host_is_no_offsite_request(mockserver: MockServer) -> None:
    class OnSiteSpider(RecordingSpider):
        name = "on-site"
        allowed_domains = ["site.test"]  # noqa: RUF012

    elsewhere = mockserver.url("cdn.test", "/robots.txt")
    mockserver.set_robots("site.test", Reply(301, redirect_to=elsewhere))
    mockserver.set_robots("cdn.test", Reply(body=PRIVATE))
    urls = [mockserver.url("site.test", p) for p in ("/public", "/private")]
    settings = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.5}
    result = await run_spider(OnSiteSpider, settings, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert "Disallow: /private (line 2)" in str(result.failures[0][1])
    entry = RobotsManager.for_crawler(result.crawler).db.entry(urls[0])
    assert entry is not None
    assert (entry.outcome, entry.url) == (Outcome.RULES, elsewhere)


@async_test
async def test_a_relative_redirect_is_followed(mockserver: MockServer) -> None:
    mockserver.set_robots(
        "rel.test", Reply(302, redirect_to="/robots.txt?v=2"), Reply(body=PRIVATE)
    )
    urls = [mockserver.url("rel.test", p) for p in ("/public", "/private")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert [r.path for r in robots_log(mockserver, "rel.test")] == ["/robots.txt"]
    assert [r.path for r in mockserver.requests_for("rel.test", "/robots.txt?v=2")] == [
        "/robots.txt?v=2"
    ]


@async_test
async def test_more_than_five_redirects_count_as_no_robots_txt(mockserver: MockServer) -> None:
    hops = ["far.test", *(f"hop{n}.test" for n in range(1, 7))]
    for here, there in itertools.pairwise(hops):
        mockserver.set_robots(here, Reply(301, redirect_to=mockserver.url(there, "/robots.txt")))
    mockserver.set_robots("hop6.test", Reply(body=b"User-agent: *\nDisallow: /\n"))
    urls = [mockserver.url("far.test", p) for p in ("/a", "/private")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert sorted(result.crawled) == sorted(urls)
    # Five redirects followed, the sixth not: hop6 is never asked.
    assert stat(result, "response_status_count/301") == 6
    assert robots_log(mockserver, "hop6.test") == []
    entry = RobotsManager.for_crawler(result.crawler).db.entry(urls[0])
    assert entry is not None
    assert (entry.outcome, entry.status) == (Outcome.ALLOW_ALL, 301)


@async_test
async def test_a_redirect_loop_counts_as_no_robots_txt(mockserver: MockServer) -> None:
    mockserver.set_robots(
        "ping.test", Reply(302, redirect_to=mockserver.url("pong.test", "/robots.txt"))
    )
    mockserver.set_robots(
        "pong.test", Reply(302, redirect_to=mockserver.url("ping.test", "/robots.txt"))
    )
    url = mockserver.url("ping.test", "/page")
    result = await run_spider(RecordingSpider, OURS, start_urls=[url])
    assert result.crawled == [url]
    assert stat(result, "request_count") == 6
    assert len(robots_log(mockserver, "ping.test")) == 3
