"""The five defects of Scrapy 2.19's RobotsTxtMiddleware that this package fixes.

Each test runs the same crawl twice, with Scrapy's built-in middleware and
with this package's, and checks one behaviour SPEC 8 asks for: the built-in
gets it wrong, ours gets it right. Should a Scrapy release fix a defect, its
test fails on the built-in side, and this file needs updating.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.exceptions import RobotsTxtUnreachable
from scrapy_robotrules.crawl.manager import RobotsManager
from tests.helpers.crawling import (
    SCRAPY_VERSION,
    CrawlResult,
    RecordingSpider,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
    when,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.slots import SLOT_LOG, assert_released_apart, pages_released
from tests.helpers.variants import (
    BUILTIN,
    OURS,
    ChainSpider,
    Step,
    StepSpider,
    pause,
    robots_log,
    settled,
)

CRAWL_TESTS = True

DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


def ours_parked(crawlers: list[Crawler]) -> int:
    """How many requests this package parked so far in the crawl of ``crawlers[0]``."""
    if not crawlers or crawlers[0].stats is None:
        return 0
    return int(crawlers[0].stats.get_value("robotrules/parked", 0))


def builtin_middleware(result: CrawlResult[Any]) -> RobotsTxtMiddleware:
    (middleware,) = [
        mw
        for mw in result.crawler.engine.downloader.middleware.middlewares
        if isinstance(mw, RobotsTxtMiddleware)
    ]
    return middleware


# 1. Requests that arrive while robots.txt is loading.


@async_test
async def test_1_requests_waiting_for_robots_txt_get_its_decision(mockserver: MockServer) -> None:
    urls = [mockserver.url("site.test", f"/{n}") for n in range(20)]
    # robots.txt is answered once pages wait for it: the built-in keeps them
    # in the downloader, beside its fetch; this package parks them outside.
    crawlers: list[Crawler] = []

    def waiting(least: int) -> Callable[[], bool]:
        def look() -> bool:
            running = compat.downloader(crawlers[0]) if crawlers else None
            return mockserver.holding("site.test") == 1 and (
                running is not None and len(running.active) >= least
            )

        return look

    def answer() -> None:
        mockserver.release("site.test")

    mockserver.set_robots("site.test", Reply(hang=True), Reply(body=DISALLOW_ALL))
    released = when(waiting(3), answer)  # the fetch and two pages at least
    builtin = await run_spider(RecordingSpider, BUILTIN, start_urls=urls, crawlers=crawlers)
    assert released[0]
    assert builtin.stats.get("robotstxt/response_count") == 1  # answered, not timed out
    crawlers.clear()
    mockserver.set_robots("site.test", Reply(hang=True), Reply(body=DISALLOW_ALL))
    released = when(lambda: ours_parked(crawlers) >= len(urls), answer)
    ours = await run_spider(RecordingSpider, OURS, start_urls=urls, crawlers=crawlers)
    assert released[0]
    # The built-in (Scrapy 2.14+) lets through requests that waited on the file while it loaded.
    if SCRAPY_VERSION >= (2, 14):
        assert builtin.crawled != []
    assert ours.crawled == []
    assert sorted(ours.ignored) == sorted(urls)


# 2. Server and network errors.


@async_test
async def test_2_a_server_error_is_no_permission_to_crawl(mockserver: MockServer) -> None:
    mockserver.set_robots("busy.test", Reply(503, b"busy"), Reply(body=DISALLOW_ALL))
    url = mockserver.url("busy.test", "/page")
    builtin = await run_spider(RecordingSpider, BUILTIN, start_urls=[url])
    assert builtin.crawled == [url]  # the 503 made everything allowed, for good
    mockserver.set_robots("busy.test", Reply(503, b"busy"), Reply(body=DISALLOW_ALL))
    ours = await run_spider(RecordingSpider, OURS, start_urls=[url])
    assert ours.crawled == []
    assert ours.ignored == [url]
    assert len(robots_log(mockserver, "busy.test")) == 1 + 2


@async_test
async def test_2_a_network_error_is_no_permission_to_crawl(mockserver: MockServer) -> None:
    private = b"User-agent: *\nDisallow: /private\n"
    url = mockserver.url("hang.test", "/private")
    settings = {"DOWNLOAD_TIMEOUT": 0.3}
    mockserver.set_robots("hang.test", Reply(hang=True), Reply(body=private))
    builtin = await run_spider(RecordingSpider, {**BUILTIN, **settings}, start_urls=[url])
    assert builtin.crawled == [url]  # the timeout made everything allowed
    mockserver.set_robots("hang.test", Reply(hang=True), Reply(body=private))
    ours = await run_spider(RecordingSpider, {**OURS, **settings}, start_urls=[url])
    assert ours.crawled == []
    assert "Disallow: /private (line 2)" in str(ours.failures[0][1])


@async_test
async def test_2_an_origin_that_never_answers_is_not_crawled(mockserver: MockServer) -> None:
    url = mockserver.url("down.test", "/page")
    mockserver.set_robots("down.test", Reply(500, b"down"))
    builtin = await run_spider(RecordingSpider, BUILTIN, start_urls=[url])
    assert builtin.crawled == [url]
    settings = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.3}
    ours = await run_spider(RecordingSpider, settings, start_urls=[url])
    assert ours.crawled == []
    assert isinstance(ours.failures[0][1], RobotsTxtUnreachable)


# 3. Rules that never expire, a cache without bounds, http and https together.


@async_test
async def test_3_rules_expire(mockserver: MockServer) -> None:
    def script() -> None:
        mockserver.set_robots(
            "site.test", Reply(body=b""), Reply(body=b"User-agent: *\nDisallow: /later\n")
        )

    url = mockserver.url
    first, refresh, later = (url("site.test", p) for p in ("/first", "/refresh", "/later"))
    script()
    # The built-in keeps each file for the whole crawl: at least 0.5 s of real
    # time (longer than our ROBOTRULES_MAX_AGE below) changes nothing.
    steps: list[Step] = [first, pause(0.5), refresh, pause(0.5), later]
    builtin = await run_spider(StepSpider, BUILTIN, steps=steps)
    assert len(builtin.crawled) == 3
    assert len(robots_log(mockserver, "site.test")) == 1
    script()
    # Ours: 0.5 s later on the crawl's clock, /refresh finds the rules stale
    # and is decided by them while they are fetched again; /later waits for
    # that fetch to end.
    steps = [first, 0.5, refresh, settled, later]
    settings = {**OURS, "ROBOTRULES_MAX_AGE": 0.3}
    ours = await run_spider(StepSpider, settings, steps=steps)
    assert ours.crawled == [first, refresh]
    assert ours.ignored == [later]
    assert len(robots_log(mockserver, "site.test")) - 1 == 2
    assert ours.stats["robotrules/refreshed"] == 1


@async_test
async def test_3_the_cache_is_bounded(mockserver: MockServer) -> None:
    urls = [mockserver.url(f"host{n}.test", "/") for n in range(5)]
    builtin = await run_spider(RecordingSpider, BUILTIN, start_urls=urls)
    assert len(builtin_middleware(builtin)._parsers) == 5
    ours = await run_spider(RecordingSpider, {**OURS, "ROBOTRULES_CACHE_SIZE": 2}, start_urls=urls)
    assert len(RobotsManager.for_crawler(ours.crawler).db) == 2
    assert ours.stats["robotrules/evicted"] == 3


@async_test
async def test_3_http_rules_do_not_apply_to_https(mockserver: MockServer) -> None:
    # The same host and port: Scrapy keys robots.txt by netloc, not origin.
    mockserver.set_robots("site.test", Reply(body=b"User-agent: *\nDisallow: /account\n"))
    plain = mockserver.url("site.test", "/")
    secure = f"https://site.test:{mockserver.port}/account"
    chain = [plain, secure]  # secure once plain was answered: its rules are in
    settings = {"ROBOTRULES_UNREACHABLE_TIMEOUT": 0.3}
    builtin = await run_spider(ChainSpider, {**BUILTIN, **settings}, chain=chain)
    assert [(u, str(e)) for u, e in builtin.failures] == [(secure, "Forbidden by robots.txt")]
    ours = await run_spider(ChainSpider, {**OURS, **settings}, chain=chain)
    # https://site.test has its own robots.txt, which cannot be fetched here
    # (the server speaks plain HTTP): no http rule decides for it.
    ((url, exc),) = ours.failures
    assert url == secure
    assert str(exc).startswith(
        f"robots.txt unreachable: https://site.test:{mockserver.port}/robots.txt"
    )


# 4. Which name the crawler goes by.


# Scrapy 2.19 deprecates the attribute (UserAgentMiddleware warns) but still uses it.
@pytest.mark.filterwarnings("ignore:The 'user_agent' spider attribute is deprecated")
@async_test
async def test_4_the_spiders_user_agent_is_the_crawlers_name(mockserver: MockServer) -> None:
    class NamedSpider(RecordingSpider):
        name = "named"
        user_agent = "GoodBot/1.0"

    mockserver.set_robots("site.test", Reply(body=b"User-agent: goodbot\nDisallow: /private\n"))
    url = mockserver.url("site.test", "/private")
    builtin = await run_spider(NamedSpider, BUILTIN, start_urls=[url])
    assert builtin.crawled == [url]  # matched as "Scrapy/2.x", the USER_AGENT setting
    ours = await run_spider(NamedSpider, OURS, start_urls=[url])
    assert ours.ignored == [url]


@async_test
async def test_4_only_the_product_token_is_matched(mockserver: MockServer) -> None:
    robots = b"User-agent: badbot\nDisallow: /\n"
    mockserver.set_robots("site.test", Reply(body=robots))
    url = mockserver.url("site.test", "/page")
    agent = {"USER_AGENT": "GoodBot/1.0 (compatible; not badbot)"}
    builtin = await run_spider(RecordingSpider, {**BUILTIN, **agent}, start_urls=[url])
    assert builtin.ignored == [url]  # "badbot" was found in the comment
    ours = await run_spider(RecordingSpider, {**OURS, **agent}, start_urls=[url])
    assert ours.crawled == [url]


# 5. Crawl-delay.


@async_test
async def test_5_crawl_delay_is_applied(mockserver: MockServer) -> None:
    mockserver.set_robots("slow.test", Reply(body=b"User-agent: *\nCrawl-delay: 0.5\n"))
    urls = [mockserver.url("slow.test", f"/{n}") for n in range(3)]
    settings = {"DOWNLOAD_DELAY_JITTER": 0, **SLOT_LOG}
    builtin = await run_spider(RecordingSpider, {**BUILTIN, **settings}, start_urls=urls)
    assert {page.delay for page in pages_released(builtin.crawler, "slow.test")} == {0.0}
    ours = await run_spider(RecordingSpider, {**OURS, **settings}, start_urls=urls)
    assert_released_apart(pages_released(ours.crawler, "slow.test"), 0.5)
