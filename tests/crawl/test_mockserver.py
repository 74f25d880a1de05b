"""The crawl test infrastructure works: server, loopback DNS, crawl helpers.

These crawls run with ``ROBOTSTXT_OBEY`` off: they test the infrastructure
that the middleware's own tests stand on, not the middleware.
"""

from __future__ import annotations

import gzip
import sys
import time

import pytest
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.reactor import is_asyncio_reactor_installed
from scrapy.utils.test import get_crawler
from twisted.internet.error import DNSLookupError

from tests.helpers.crawling import (
    TWISTED_ONLY,
    RecordingSpider,
    Running,
    async_test,
    download_error,
    error_path,
    fetch,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    not_reactorless,
    reactorless,
    run_spider,
    until,
)
from tests.helpers.mockserver import LoopbackResolver, MockServer, Reply, get_reactor

FAST = {"ROBOTSTXT_OBEY": False, "RETRY_ENABLED": False, "DOWNLOAD_TIMEOUT": 0.5}
ROBOTS = b"User-agent: *\nDisallow: /private\n"
# Scrapy (2.14+) reports download errors as its own exceptions, 2.13 as Twisted's.
TIMEOUT = error_path("DownloadTimeoutError")
NO_DNS = error_path("CannotResolveHostError")
DownloadTimeoutError = download_error("DownloadTimeoutError")
CannotResolveHostError = download_error("CannotResolveHostError")
ResponseDataLossError = download_error("ResponseDataLossError")


@not_reactorless(TWISTED_ONLY)
def test_the_session_runs_the_reactor_chosen_with_the_reactor_option(
    request: pytest.FixtureRequest,
) -> None:
    chose_asyncio = request.config.getoption("reactor") == "asyncio"
    assert is_asyncio_reactor_installed() == chose_asyncio


@pytest.mark.skipif(not reactorless(), reason="a run without a reactor only")
def test_without_pytest_twisted_the_session_runs_no_reactor_and_refuses_one() -> None:
    assert "twisted.internet.reactor" not in sys.modules
    with pytest.raises(ImportError, match="forbidden when running without a Twisted reactor"):
        get_reactor()


@async_test
async def test_a_crawl_reaches_three_hosts_by_name(mockserver: MockServer) -> None:
    hosts = ["site-a.test", "site-b.test", "site-c.test"]
    urls = [mockserver.url(host, "/") for host in hosts]
    result = await run_spider(RecordingSpider, FAST, start_urls=urls)
    assert sorted(result.crawled) == urls
    assert result.stats["finish_reason"] == "finished"
    for host in hosts:
        assert [(r.host, r.path) for r in mockserver.requests_for(host)] == [(host, "/")]


@async_test
async def test_a_crawl_follows_links_across_hosts(mockserver: MockServer) -> None:
    b_page = mockserver.url("site-b.test", "/b")
    mockserver.set_pages("site-a.test", links=["/one", "/two?x=1", b_page])
    start = mockserver.url("site-a.test", "/")
    result = await run_spider(RecordingSpider, FAST, start_urls=[start], follow=True)
    one, two = mockserver.url("site-a.test", "/one"), mockserver.url("site-a.test", "/two?x=1")
    assert sorted(result.crawled) == sorted([start, one, two, b_page])
    # /one and /two link to the same three pages again: the dupefilter drops those.
    assert one in result.dropped
    assert [r.path for r in mockserver.requests_for("site-b.test")] == ["/b"]


@async_test
async def test_robots_replies_are_used_in_order_and_the_last_one_repeats(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("flaky.test", Reply(503, b"busy"), Reply(200, ROBOTS))
    url = mockserver.url("flaky.test", "/robots.txt")
    first, second, third = [await fetch(url) for _ in range(3)]
    assert (first.status, first.body) == (503, b"busy")
    assert (second.status, second.body) == (200, ROBOTS)
    assert (third.status, third.body) == (200, ROBOTS)
    assert len(mockserver.requests_for("flaky.test", "/robots.txt")) == 3


@async_test
async def test_an_unconfigured_host_has_no_robots_txt(mockserver: MockServer) -> None:
    assert (await fetch(mockserver.url("plain.test", "/robots.txt"))).status == 404


@async_test
async def test_robots_redirect_gzip_and_headers(mockserver: MockServer) -> None:
    target = mockserver.url("other.test", "/robots.txt")
    mockserver.set_robots("moved.test", Reply(301, redirect_to=target))
    mockserver.set_robots("zipped.test", Reply(body=ROBOTS, gzip=True))
    mockserver.set_robots(
        "cached.test", Reply(body=ROBOTS, headers={"Cache-Control": "max-age=60"})
    )

    moved = await fetch(mockserver.url("moved.test", "/robots.txt"))
    assert (moved.status, moved.headers["location"]) == (301, target)
    zipped = await fetch(mockserver.url("zipped.test", "/robots.txt"))
    assert zipped.headers["content-encoding"] == "gzip"
    assert gzip.decompress(zipped.body) == ROBOTS
    cached = await fetch(mockserver.url("cached.test", "/robots.txt"))
    assert cached.headers["cache-control"] == "max-age=60"
    assert cached.headers["content-type"] == "text/plain"


@async_test
async def test_a_reset_robots_txt_is_a_data_loss_for_scrapy(mockserver: MockServer) -> None:
    mockserver.set_robots("reset.test", Reply(body=ROBOTS, reset=True))
    url = mockserver.url("reset.test", "/robots.txt")
    result = await run_spider(RecordingSpider, FAST, start_urls=[url])
    assert [(u, type(e)) for u, e in result.failures] == [(url, ResponseDataLossError)]


@async_test
async def test_ignored_requests_and_their_log_lines_are_collected(mockserver: MockServer) -> None:
    # Scrapy's own RobotsTxtMiddleware stands in for ours, which tests this way.
    mockserver.set_robots("site.test", Reply(body=ROBOTS))
    home, private = mockserver.url("site.test", "/"), mockserver.url("site.test", "/private")
    settings = {**FAST, "ROBOTSTXT_OBEY": True}
    result = await run_spider(RecordingSpider, settings, start_urls=[home, private])
    assert result.crawled == [home]
    assert result.ignored == [private]
    assert result.messages(f"Forbidden by robots.txt: <GET {private}>")
    assert len(mockserver.requests_for("site.test", "/robots.txt")) == 1


@async_test
async def test_the_request_log_has_host_path_time_and_user_agent(mockserver: MockServer) -> None:
    urls = [mockserver.url("slow.test", f"/{n}") for n in range(3)]
    settings = {**FAST, "USER_AGENT": "TestBot/1.0"}
    started = time.monotonic()
    await run_spider(RecordingSpider, settings, start_urls=urls)
    ended = time.monotonic()
    log = mockserver.requests_for("slow.test")
    assert sorted(r.path for r in log) == ["/0", "/1", "/2"]
    assert {r.user_agent for r in log} == {"TestBot/1.0"}
    # The time of arrival, on the monotonic clock, in order.
    times = [r.time for r in log]
    assert started <= times[0] <= times[1] <= times[2] <= ended


@async_test
async def test_a_hanging_robots_txt_times_out(mockserver: MockServer) -> None:
    mockserver.set_robots("hang.test", Reply(hang=True))
    url = mockserver.url("hang.test", "/robots.txt")
    result = await run_spider(RecordingSpider, FAST, start_urls=[url])
    assert result.crawled == []
    assert result.stats[f"downloader/exception_type_count/{TIMEOUT}"] == 1
    assert [(u, type(e)) for u, e in result.failures] == [(url, DownloadTimeoutError)]
    assert result.stats["finish_reason"] == "finished"


@async_test
async def test_delayed_pages_answer_late_or_time_out(mockserver: MockServer) -> None:
    mockserver.set_pages("late.test", delays={"/late": 0.3, "/never": 5.0})
    fast, late, never = (mockserver.url("late.test", p) for p in ["/fast", "/late", "/never"])
    started = time.monotonic()
    result = await run_spider(
        RecordingSpider, {**FAST, "DOWNLOAD_TIMEOUT": 1.0}, start_urls=[late, fast, never]
    )
    assert sorted(result.crawled) == sorted([fast, late])
    assert time.monotonic() - started >= 0.3  # by cause: /late was answered 0.3 s after it came
    assert [(u, type(e)) for u, e in result.failures] == [(never, DownloadTimeoutError)]


@async_test
async def test_invalid_hosts_fail_dns_and_never_reach_the_server(mockserver: MockServer) -> None:
    url = mockserver.url("nowhere.invalid", "/")
    result = await run_spider(RecordingSpider, FAST, start_urls=[url])
    assert result.stats[f"downloader/exception_type_count/{NO_DNS}"] == 1
    assert [(u, type(e)) for u, e in result.failures] == [(url, CannotResolveHostError)]
    assert mockserver.requests == []


@not_reactorless(TWISTED_ONLY)
@async_test
async def test_the_loopback_resolver_builds_like_a_scrapy_dns_resolver() -> None:
    reactor = get_reactor()
    resolver = build_from_crawler(LoopbackResolver, get_crawler(), reactor=reactor)
    assert await resolver.getHostByName("www.example.com") == "127.0.0.1"
    with pytest.raises(DNSLookupError):
        await resolver.getHostByName("Unknown.Invalid.")


@async_test
async def test_stop_drops_requests_that_would_never_be_answered(mockserver: MockServer) -> None:
    mockserver.set_robots("hang.test", Reply(hang=True))
    pending = Running(fetch(mockserver.url("hang.test", "/robots.txt")))
    await until(lambda: bool(mockserver.requests))
    await mockserver.stop()
    with pytest.raises(Exception, match="Connection"):
        await pending


@async_test
async def test_release_answers_the_hung_robots_txt_fetches_of_one_host(
    mockserver: MockServer,
) -> None:
    for host in ("held.test", "other.test"):
        mockserver.set_robots(host, Reply(hang=True))
    held = [
        Running(fetch(mockserver.url(host, "/robots.txt")))
        for host in ("held.test", "held.test", "other.test")
    ]
    await until(lambda: len(mockserver.requests) >= 3)
    mockserver.release("held.test", Reply(body=b"User-agent: *\n"))
    assert [(await d).body for d in held[:2]] == [b"User-agent: *\n"] * 2
    assert not held[2].done  # another host's fetch still hangs
    held[2].forget()  # cut off when the server stops
    later = await fetch(mockserver.url("held.test", "/robots.txt"))
    assert later.body == b"User-agent: *\n"  # and later fetches get the reply at once


@async_test
async def test_a_crawl_that_never_ends_fails_instead_of_hanging(mockserver: MockServer) -> None:
    mockserver.set_robots("hang.test", Reply(hang=True))
    url = mockserver.url("hang.test", "/robots.txt")
    with pytest.raises(AssertionError, match=r"still running after 0\.5 s"):
        await run_spider(
            RecordingSpider, {**FAST, "DOWNLOAD_TIMEOUT": 30}, crawl_timeout=0.5, start_urls=[url]
        )
