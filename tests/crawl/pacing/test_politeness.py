"""Crawl-delay under Scrapy's default random delay, and no ERROR lines for robots.txt retries."""

from __future__ import annotations

import logging
from typing import Any

from scrapy_robotrules.crawl.pacing.politeness import MAX_DELAY_JITTER
from tests.helpers.crawling import (
    CrawlResult,
    RecordingSpider,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.slots import SLOT_LOG, Release, assert_released_apart, pages_released
from tests.helpers.variants import OURS, stat

CRAWL_TESTS = True


@async_test
async def test_crawl_delay_under_the_default_random_delay_keeps_gaps_near_the_delay(
    mockserver: MockServer,
) -> None:
    # Scrapy's default DOWNLOAD_DELAY_JITTER varies each gap by +-50%: a
    # floor that kept even the shortest gap at the delay made them average
    # twice the delay. Every gap at least the delay; the slot's delay (the
    # gaps' mean) within 1.25 times it, its jitter brought down.
    delay = 0.6
    mockserver.set_robots(
        "slow.test", Reply(body=f"User-agent: *\nCrawl-delay: {delay}\n".encode())
    )
    urls = [mockserver.url("slow.test", f"/{n}") for n in range(7)]
    result = await run_spider(RecordingSpider, {**OURS, **SLOT_LOG}, start_urls=urls)
    assert len(result.crawled) == 7
    pages = pages_released(result.crawler, "slow.test")
    assert_released_apart(pages, delay)
    for page in pages:
        assert page.jitter <= MAX_DELAY_JITTER
        assert page.delay <= delay * 1.25
    assert stat(result, "crawl_delay/applied") >= 1


@async_test
async def test_robots_txt_retries_log_no_errors(mockserver: MockServer) -> None:
    mockserver.set_robots("dead.test", Reply(503))
    settings = {
        **OURS,
        "RETRY_ENABLED": True,
        "RETRY_TIMES": 1,
        "ROBOTRULES_RETRY_DELAY": 0.1,
        "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.5,
    }
    result = await run_spider(
        RecordingSpider, settings, start_urls=[mockserver.url("dead.test", "/a")]
    )
    # Scrapy's retries ran, in more than one round of this package's back-off...
    assert len(mockserver.requests_for("dead.test", "/robots.txt")) >= 4
    assert result.stats.get("retry/max_reached", 0) >= 2
    # ...and no line says ERROR: the WARNING of this package says it.
    assert result.messages(level=logging.ERROR) == []
    assert "log_count/ERROR" not in result.stats
    assert result.messages("robots.txt unreachable", level=logging.WARNING)
    assert stat(result, "unreachable") == 1


@async_test
async def test_no_password_in_a_urls_userinfo_reaches_the_log(mockserver: MockServer) -> None:
    mockserver.set_robots("site.test", Reply(body=b"User-agent: *\nDisallow: /private\n"))
    mockserver.set_robots("dead.test", Reply(500))
    secret = "s3cret-pw"
    urls = [
        mockserver.url("site.test", "/private/x").replace("http://", f"http://me:{secret}@"),
        mockserver.url("dead.test", "/y").replace("http://", f"http://me:{secret}@"),
    ]
    settings = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.3, "ROBOTRULES_RETRY_DELAY": 0.1}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert (stat(result, "forbidden"), stat(result, "unreachable")) == (1, 1)
    ours = [r for r in result.records if r.name.startswith("scrapy_robotrules")]
    assert any("Forbidden by robots.txt: <GET" in r.getMessage() for r in ours)
    assert any("Dropped <GET" in r.getMessage() for r in ours)
    assert not [r.getMessage() for r in ours if secret in r.getMessage()]


# Crawl-delay and Request-rate.


async def _paced_crawl(
    mockserver: MockServer, robots: bytes, settings: dict[str, Any], count: int = 4
) -> tuple[CrawlResult[RecordingSpider], list[Release]]:
    """Crawl ``count`` pages of slow.test; the result, and when its slot let each page go."""
    mockserver.set_robots("slow.test", Reply(body=robots))
    urls = [mockserver.url("slow.test", f"/{n}") for n in range(count)]
    result = await run_spider(RecordingSpider, {**OURS, **settings, **SLOT_LOG}, start_urls=urls)
    assert len(result.crawled) == count
    pages = pages_released(result.crawler, "slow.test")
    assert len(pages) == count
    return result, pages


NO_JITTER = {"DOWNLOAD_DELAY_JITTER": 0}


@async_test
async def test_crawl_delay_spaces_the_requests_to_an_origin(mockserver: MockServer) -> None:
    robots = b"User-agent: *\nCrawl-delay: 0.5\n"
    result, pages = await _paced_crawl(mockserver, robots, NO_JITTER)
    assert_released_apart(pages, 0.5)
    assert stat(result, "crawl_delay/applied") >= 1
    origin = mockserver.url("slow.test", "")
    assert result.messages("Crawl-delay for", logging.INFO) == [
        f"Crawl-delay for {origin}: 0.5 s (robots.txt Crawl-delay: 0.5)"
    ]


@async_test
async def test_crawl_delay_is_kept_even_by_the_shortest_random_gap(
    mockserver: MockServer,
) -> None:
    robots = b"User-agent: *\nCrawl-delay: 0.3\n"
    _, pages = await _paced_crawl(mockserver, robots, {"DOWNLOAD_DELAY_JITTER": 0.5}, count=3)
    assert_released_apart(pages, 0.3)
    assert all(page.jitter <= MAX_DELAY_JITTER for page in pages)  # random, less so


@async_test
async def test_request_rate_is_a_delay_too(mockserver: MockServer) -> None:
    robots = b"User-agent: *\nRequest-rate: 2/1s\n"
    result, pages = await _paced_crawl(mockserver, robots, NO_JITTER, count=3)
    assert_released_apart(pages, 0.5)
    origin = mockserver.url("slow.test", "")
    assert result.messages("Crawl-delay for", logging.INFO) == [
        f"Crawl-delay for {origin}: 0.5 s (robots.txt Request-rate: 2/1s)"
    ]


@async_test
async def test_crawl_delay_is_bounded_by_robotrules_max_crawl_delay(
    mockserver: MockServer,
) -> None:
    robots = b"User-agent: *\nCrawl-delay: 30\n"
    settings = {**NO_JITTER, "ROBOTRULES_MAX_CRAWL_DELAY": 0.3}
    result, pages = await _paced_crawl(mockserver, robots, settings, count=3)
    assert_released_apart(pages, 0.3)
    assert {page.delay for page in pages} == {0.3}  # not 30
    origin = mockserver.url("slow.test", "")
    assert result.messages("Crawl-delay for", logging.INFO) == [
        f"Crawl-delay for {origin}: 0.3 s"
        " (Crawl-delay 30 s clamped to ROBOTRULES_MAX_CRAWL_DELAY (0.3 s))"
    ]


@async_test
async def test_crawl_delay_can_be_ignored(mockserver: MockServer) -> None:
    robots = b"User-agent: *\nCrawl-delay: 5\n"
    settings = {**NO_JITTER, "ROBOTRULES_CRAWL_DELAY": False}
    result, pages = await _paced_crawl(mockserver, robots, settings)
    assert {page.delay for page in pages} == {0.0}  # DOWNLOAD_DELAY's, nothing more
    assert stat(result, "crawl_delay/applied") == 0
    assert result.messages("Crawl-delay for") == []


@async_test
async def test_crawl_delay_is_a_floor_under_autothrottle(mockserver: MockServer) -> None:
    robots = b"User-agent: *\nCrawl-delay: 0.5\n"
    settings = {
        **NO_JITTER,
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_START_DELAY": 0.0,
        "AUTOTHROTTLE_MAX_DELAY": 5.0,
        "AUTOTHROTTLE_DEBUG": True,
    }
    result, pages = await _paced_crawl(mockserver, robots, settings)
    # AutoThrottle did lower the slot's delay after responses...
    assert result.messages("slot: slow.test")
    # ...and the Crawl-delay floor was put back each time.
    assert_released_apart(pages, 0.5)
