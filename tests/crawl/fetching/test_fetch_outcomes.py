"""What a robots.txt fetch means in real crawls: 4xx, 401/403, 429/5xx, network errors,
stale rules, size (SPEC 8).
"""

from __future__ import annotations

import logging
import socket

import pytest

from scrapy_robotrules.crawl.exceptions import RobotsTxtUnreachable
from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.crawl.signals import robotrules_fetched
from tests.helpers.crawling import (
    NO_RESOLVER,
    RecordingSpider,
    async_test,
    download_error,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    not_reactorless,
    run_spider,
    until,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import (
    OURS,
    PRIVATE,
    ChainSpider,
    ManualClock,
    Step,
    StepSpider,
    gaps,
    paths,
    robots_log,
    settled,
    stat,
)

CRAWL_TESTS = True
"""Run under both reactors in CI, the manager tests without a server too."""


@async_test
async def test_404_means_everything_allowed(mockserver: MockServer) -> None:
    mockserver.set_robots("none.test", Reply(404, b"Not Found"))
    urls = [mockserver.url("none.test", p) for p in ("/", "/private")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert sorted(result.crawled) == sorted(urls)
    assert stat(result, "response_status_count/404") == 1
    assert stat(result, "allowed") == 2


@pytest.mark.parametrize("status", [401, 403])
@async_test
async def test_401_and_403_allow_everything_by_default(mockserver: MockServer, status: int) -> None:
    mockserver.set_robots("locked.test", Reply(status, b"go away"))
    url = mockserver.url("locked.test", "/page")
    result = await run_spider(RecordingSpider, OURS, start_urls=[url])
    assert result.crawled == [url]


@pytest.mark.parametrize("status", [401, 403])
@async_test
async def test_401_and_403_disallow_everything_when_set_to(
    mockserver: MockServer, status: int
) -> None:
    mockserver.set_robots("locked.test", Reply(status, b"go away"))
    urls = [mockserver.url("locked.test", p) for p in ("/", "/page")]
    settings = {**OURS, "ROBOTRULES_UNAUTHORIZED": "disallow"}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == []
    assert sorted(result.ignored) == sorted(urls)
    messages = {str(exc) for _, exc in result.failures}
    assert messages == {
        f"Forbidden by robots.txt: disallowed: robots.txt refused (HTTP {status}):"
        " everything disallowed"
    }
    assert stat(result, "forbidden") == 2


@pytest.mark.parametrize("status", [429, 500, 503])
@async_test
async def test_429_and_5xx_hold_requests_until_robots_txt_answers(
    mockserver: MockServer, status: int
) -> None:
    mockserver.set_robots(
        "busy.test", Reply(status, b"busy"), Reply(status, b"busy"), Reply(body=PRIVATE)
    )
    urls = [mockserver.url("busy.test", p) for p in ("/public", "/private")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]
    fetches = robots_log(mockserver, "busy.test")
    assert len(fetches) == 3
    # Back-off: 0.2 s, then 0.4 s (ROBOTRULES_RETRY_DELAY doubling). Lower
    # bounds by cause: each wait starts once the fetch before was answered.
    first, second = gaps(fetches)
    assert first >= 0.18
    assert second >= 0.38
    # Nothing but robots.txt was asked of the site before the rules came.
    pages = [r for r in mockserver.requests_for("busy.test") if r.path != "/robots.txt"]
    assert min(r.time for r in pages) >= fetches[-1].time
    assert stat(result, f"response_status_count/{status}") == 2
    assert stat(result, "origins/unreachable") == 1
    assert result.messages("robots.txt unreachable", logging.WARNING)


@async_test
async def test_scrapy_retries_apply_to_the_robots_request(mockserver: MockServer) -> None:
    mockserver.set_robots("flaky.test", Reply(503, b"busy"), Reply(body=PRIVATE))
    urls = [mockserver.url("flaky.test", p) for p in ("/public", "/private")]
    settings = {**OURS, "RETRY_ENABLED": True, "RETRY_TIMES": 2}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == [urls[0]]
    # RetryMiddleware fetched again at once: one fetch of ours, no hold.
    assert stat(result, "request_count") == 1
    assert stat(result, "origins/unreachable") == 0
    assert result.stats["retry/count"] == 1


# Network errors (SPEC 8: unreachable, never "allow all").


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@async_test
async def test_an_unresolvable_host_is_held_then_dropped_as_unreachable(
    mockserver: MockServer,
) -> None:
    urls = [mockserver.url("nowhere.invalid", f"/{n}") for n in range(3)]
    no_dns = download_error("CannotResolveHostError").__name__
    settings = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.5}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == []
    assert sorted(result.ignored) == sorted(urls)
    for _, exc in result.failures:
        assert isinstance(exc, RobotsTxtUnreachable)
        assert str(exc).startswith(
            f"robots.txt unreachable: http://nowhere.invalid:{mockserver.port}/robots.txt"
        )
        assert no_dns in str(exc)
    assert stat(result, "unreachable") == 3
    assert stat(result, f"exception_count/{no_dns}") >= 2
    assert stat(result, "origins/unreachable") == 1
    [dropping] = result.messages("robots.txt unreachable: dropping", logging.WARNING)
    origin = mockserver.url("nowhere.invalid", "")
    assert dropping.startswith(
        f"robots.txt unreachable: dropping 3 requests for {origin}, parked for 0.5 s ("
    )
    assert result.messages("Dropped <GET", logging.DEBUG)


@not_reactorless(NO_RESOLVER)
@async_test
async def test_a_refused_connection_is_unreachable(mockserver: MockServer) -> None:
    url = f"http://refused.test:{_closed_port()}/page"
    settings = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.3}
    result = await run_spider(RecordingSpider, settings, start_urls=[url])
    assert result.ignored == [url]
    assert isinstance(result.failures[0][1], RobotsTxtUnreachable)
    exceptions = [k for k in result.stats if k.startswith("robotrules/exception_count/")]
    assert len(exceptions) == 1
    assert "Refused" in exceptions[0]


@async_test
async def test_a_robots_txt_that_times_out_is_unreachable(mockserver: MockServer) -> None:
    mockserver.set_robots("hang.test", Reply(hang=True))
    url = mockserver.url("hang.test", "/page")
    settings = {**OURS, "DOWNLOAD_TIMEOUT": 0.3, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.5}
    result = await run_spider(RecordingSpider, settings, start_urls=[url])
    assert result.ignored == [url]
    timeout = download_error("DownloadTimeoutError").__name__
    assert timeout in str(result.failures[0][1])
    assert stat(result, f"exception_count/{timeout}") >= 1
    assert mockserver.requests_for("hang.test", "/page") == []


@async_test
async def test_a_connection_reset_mid_body_is_unreachable(mockserver: MockServer) -> None:
    mockserver.set_robots("reset.test", Reply(body=PRIVATE, reset=True), Reply(body=PRIVATE))
    urls = [mockserver.url("reset.test", p) for p in ("/public", "/private")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]
    data_loss = download_error("ResponseDataLossError").__name__
    assert stat(result, f"exception_count/{data_loss}") == 1


@async_test
async def test_requests_arriving_after_the_unreachable_timeout_are_dropped_at_once(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("down.test", Reply(503, b"down"))
    first, later = mockserver.url("down.test", "/first"), mockserver.url("down.test", "/later")
    clock = ManualClock()

    def timeout_passes_once_fetched(spider: StepSpider) -> None:
        # As the failed fetch ends, before anyone is woken: /first finds
        # the timeout passed, /later comes well within the 5 s back-off.
        spider.crawler.signals.connect(
            lambda **_: clock.advance(0.5), signal=robotrules_fetched, weak=False
        )

    settings = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.3, "ROBOTRULES_RETRY_DELAY": 5.0}
    steps = [timeout_passes_once_fetched, first, later]
    result = await run_spider(StepSpider, settings, steps=steps, clock=clock)
    assert result.ignored == [first, later]
    assert all(isinstance(exc, RobotsTxtUnreachable) for _, exc in result.failures)
    assert not result.messages("dropping")  # none was held until a give-up
    # The later request came during the back-off: no new fetch for it.
    assert len(robots_log(mockserver, "down.test")) == 1
    assert stat(result, "unreachable") == 2


@async_test
async def test_earlier_rules_decide_while_robots_txt_is_unreachable(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("once.test", Reply(body=PRIVATE), Reply(503, b"down"))
    url = mockserver.url
    steps: list[Step] = [
        url("once.test", "/a"),
        0.5,
        url("once.test", "/b"),  # stale: decided at once; the refresh gets a 503
        settled,
        0.4,  # past the unreachable timeout and the back-off: fetched again (503)
        url("once.test", "/private"),
        url("once.test", "/c"),
    ]
    settings = {**OURS, "ROBOTRULES_MAX_AGE": 0.3, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.1}
    result = await run_spider(StepSpider, settings, steps=steps)
    assert paths(result, result.crawled) == ["a", "b", "c"]
    assert result.ignored == [url("once.test", "/private")]
    assert "Disallow: /private (line 2)" in str(result.failures[0][1])
    assert len(robots_log(mockserver, "once.test")) == 3
    assert stat(result, "unreachable") == 0
    assert stat(result, "origins/unreachable") == 1


# Freshness and the rules database.


@async_test
async def test_stale_rules_decide_while_fresh_ones_are_fetched(mockserver: MockServer) -> None:
    old = b"User-agent: *\nDisallow: /old\n"
    new = b"User-agent: *\nDisallow: /new\n"
    # The server holds the refresh until the test releases it.
    mockserver.set_robots("fresh.test", Reply(body=old), Reply(hang=True), Reply(body=new))
    url = mockserver.url
    refreshing: list[bool] = []

    async def release_the_refresh(spider: StepSpider) -> None:
        # /during was answered: had it waited for the refresh, none would be
        # under way now (the server holds it until released here).
        refreshing.append(spider.manager().parking.pending())
        if refreshing[0]:
            await until(lambda: mockserver.holding("fresh.test") == 1)
            refreshing.append(mockserver.release("fresh.test") == 1)

    steps: list[Step] = [
        url("fresh.test", "/first"),
        0.5,
        url("fresh.test", "/during"),  # stale: decided by the old rules at once
        release_the_refresh,
        settled,
        url("fresh.test", "/new"),
        url("fresh.test", "/old"),
    ]
    # The held refresh must not time out before the test releases it.
    settings = {**OURS, "ROBOTRULES_MAX_AGE": 0.3, "DOWNLOAD_TIMEOUT": 30.0}
    result = await run_spider(StepSpider, settings, steps=steps)
    assert refreshing == [True, True]
    assert paths(result, result.crawled) == ["during", "first", "old"]
    assert result.ignored == [url("fresh.test", "/new")]
    assert len(robots_log(mockserver, "fresh.test")) == 2
    assert stat(result, "origins/unreachable") == 0
    assert stat(result, "refreshed") == 1


@async_test
async def test_the_cache_keeps_at_most_robotrules_cache_size_origins(
    mockserver: MockServer,
) -> None:
    url = mockserver.url
    # Each once the one before was answered: c.test's rules came in before a.test/2.
    chain = [url("a.test", "/1"), url("b.test", "/1"), url("c.test", "/1"), url("a.test", "/2")]
    settings = {**OURS, "ROBOTRULES_CACHE_SIZE": 2}
    result = await run_spider(ChainSpider, settings, chain=chain)
    assert len(result.crawled) == 4
    assert len(robots_log(mockserver, "a.test")) == 2
    assert stat(result, "evicted") >= 1
    assert stat(result, "origins") == 2
    assert len(RobotsManager.for_crawler(result.crawler).db) == 2


@async_test
async def test_robots_txt_larger_than_max_size_is_cut(mockserver: MockServer) -> None:
    body = b"User-agent: *\nDisallow: /a\nDisallow: /b\n"
    mockserver.set_robots("big.test", Reply(body=body))
    urls = [mockserver.url("big.test", p) for p in ("/a", "/b")]
    settings = {**OURS, "ROBOTRULES_MAX_SIZE": len(b"User-agent: *\nDisallow: /a\nDisal")}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == [urls[1]]
    assert result.ignored == [urls[0]]


@async_test
async def test_a_gzipped_robots_txt_is_read(mockserver: MockServer) -> None:
    mockserver.set_robots("zipped.test", Reply(body=PRIVATE, gzip=True))
    urls = [mockserver.url("zipped.test", p) for p in ("/public", "/private")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert result.crawled == [urls[0]]
