"""RobotRulesMiddleware in real crawls: SPEC 8 against a server that misbehaves on cue.

Each test scripts what a site's robots.txt does (``MockServer.set_robots``),
crawls it with Scrapy and the add-on, and checks what was crawled, what was
dropped and why, what the server saw, and the ``robotrules/`` stats.
"""

from __future__ import annotations

import itertools
import logging
import socket
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from helpers.crawling import (
    CrawlResult,
    RecordingSpider,
    async_test,
    download_error,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    release_when,
    run_spider,
    when,
)
from helpers.mockserver import MockServer, Reply
from helpers.variants import (
    OURS,
    PRIVATE,
    TimedSpider,
    gaps,
    paths,
    robots_log,
    stat,
)
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from scrapy_robotrules import Decision, Outcome, RobotParser, RobotsTxt
from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl import signals as robotrules_signals
from scrapy_robotrules.crawl.manager import RobotsManager, RobotsTxtUnreachable

CRAWL_TESTS = True
"""Run under both reactors in CI, the manager tests without a server too."""


class SignalSpider(RecordingSpider):
    """Records the ``robots_parsed`` and ``robotrules_fetched`` signals."""

    name = "signals"

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SignalSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, SignalSpider)
        spider.parsed = []
        spider.fetched = []
        if compat.ROBOTS_PARSED is not None:  # Scrapy 2.18+
            crawler.signals.connect(spider.on_parsed, signal=compat.ROBOTS_PARSED)
        crawler.signals.connect(spider.on_fetched, signal=robotrules_signals.robotrules_fetched)
        return spider

    parsed: list[tuple[Any, Request]]
    fetched: list[dict[str, Any]]

    def on_parsed(self, robotparser: Any, request: Request) -> None:
        self.parsed.append((robotparser, request))

    def on_fetched(self, **kwargs: Any) -> None:
        kwargs.pop("signal", None)
        kwargs.pop("sender", None)
        self.fetched.append(kwargs)


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
    # Back-off: 0.2 s, then 0.4 s (ROBOTRULES_RETRY_DELAY doubling).
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
    assert result.messages("robots.txt unreachable: dropping 3 requests", logging.WARNING)
    assert result.messages("Dropped <GET", logging.DEBUG)


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
    settings = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.3, "ROBOTRULES_RETRY_DELAY": 5.0}
    result = await run_spider(TimedSpider, settings, plan=[(0, first), (0.6, later)])
    assert sorted(result.ignored) == sorted([first, later])
    # The later request came during the 5 s back-off: no new fetch for it.
    assert len(robots_log(mockserver, "down.test")) == 1
    assert stat(result, "unreachable") == 2


@async_test
async def test_earlier_rules_decide_while_robots_txt_is_unreachable(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("once.test", Reply(body=PRIVATE), Reply(503, b"down"))
    url = mockserver.url
    plan = [
        (0, url("once.test", "/a")),
        (0.5, url("once.test", "/b")),  # stale: refresh gets a 503
        (0.4, url("once.test", "/private")),
        (0, url("once.test", "/c")),
    ]
    settings = {**OURS, "ROBOTRULES_MAX_AGE": 0.3, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.1}
    result = await run_spider(TimedSpider, settings, plan=plan)
    assert paths(result, result.crawled) == ["a", "b", "c"]
    assert result.ignored == [url("once.test", "/private")]
    assert "Disallow: /private (line 2)" in str(result.failures[0][1])
    assert stat(result, "unreachable") == 0
    assert stat(result, "origins/unreachable") == 1


# Freshness and the rules database.


@async_test
async def test_stale_rules_decide_while_fresh_ones_are_fetched(mockserver: MockServer) -> None:
    old = b"User-agent: *\nDisallow: /old\n"
    new = b"User-agent: *\nDisallow: /new\n"
    # The refresh is answered only once /during was requested.
    mockserver.set_robots("fresh.test", Reply(body=old), Reply(hang=True), Reply(body=new))

    def held_and_during_asked() -> bool:
        return mockserver.holding("fresh.test") == 1 and bool(
            mockserver.requests_for("fresh.test", "/during")
        )

    released = when(held_and_during_asked, partial(mockserver.release, "fresh.test"))
    url = mockserver.url
    plan = [
        (0, url("fresh.test", "/first")),
        (0.5, url("fresh.test", "/during")),  # stale: decided by the old rules at once
        (1.0, url("fresh.test", "/new")),
        (0, url("fresh.test", "/old")),
    ]
    settings = {**OURS, "ROBOTRULES_MAX_AGE": 0.3}
    result = await run_spider(TimedSpider, settings, plan=plan)
    assert paths(result, result.crawled) == ["during", "first", "old"]
    assert result.ignored == [url("fresh.test", "/new")]
    # /during was fetched while the refresh was held (had it waited for the
    # refresh, the refresh would have timed out, unreleased, and been tried
    # again).
    assert released[0]
    assert stat(result, "origins/unreachable") == 0
    assert stat(result, "refreshed") >= 1


@async_test
async def test_the_cache_keeps_at_most_robotrules_cache_size_origins(
    mockserver: MockServer,
) -> None:
    url = mockserver.url
    plan = [
        (0, url("a.test", "/1")),
        (0.2, url("b.test", "/1")),
        (0.2, url("c.test", "/1")),
        (0.2, url("a.test", "/2")),
    ]
    settings = {**OURS, "ROBOTRULES_CACHE_SIZE": 2}
    result = await run_spider(TimedSpider, settings, plan=plan)
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


# Who is asking: agents and precedence.


class GoodBotSpider(RecordingSpider):
    name = "goodbot"
    robotrules_user_agent = "GoodBot/2.0"
    robotrules_precedence = "first-match"


FOLDER = (
    b"User-agent: goodbot\nDisallow: /folder1/\nAllow: /folder1/myfile.html\n"
    b"\nUser-agent: *\nDisallow: /\n"
)


@async_test
async def test_spider_attributes_override_the_agent_and_the_precedence(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("site.test", Reply(body=FOLDER))
    urls = [mockserver.url("site.test", p) for p in ("/folder1/myfile.html", "/other")]
    settings = {**OURS, "ROBOTRULES_USER_AGENT": "OtherBot", "ROBOTRULES_PRECEDENCE": "allow-first"}
    result = await run_spider(GoodBotSpider, settings, start_urls=urls)
    # goodbot's group, read first-match: /folder1/ decides before the Allow.
    assert result.crawled == [urls[1]]
    assert result.ignored == [urls[0]]
    assert "Disallow: /folder1/ (line 2)" in str(result.failures[0][1])


@async_test
async def test_custom_settings_override_project_settings(mockserver: MockServer) -> None:
    class AllowFirstSpider(RecordingSpider):
        name = "allow-first"
        custom_settings = {  # noqa: RUF012
            "ROBOTRULES_PRECEDENCE": "allow-first",
            "USER_AGENT": "GoodBot/1",
        }

    mockserver.set_robots("site.test", Reply(body=FOLDER))
    url = mockserver.url("site.test", "/folder1/myfile.html")
    settings = {**OURS, "ROBOTRULES_PRECEDENCE": "first-match"}
    result = await run_spider(AllowFirstSpider, settings, start_urls=[url])
    assert result.crawled == [url]


@async_test
async def test_most_specific_is_the_default(mockserver: MockServer) -> None:
    robots = b"User-agent: *\nAllow: /\nDisallow: /cgi-bin\n"
    mockserver.set_robots("site.test", Reply(body=robots))
    urls = [mockserver.url("site.test", p) for p in ("/cgi-bin/x", "/index")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert result.crawled == [urls[1]]
    assert "Disallow: /cgi-bin (line 3)" in str(result.failures[0][1])


@async_test
async def test_the_product_token_is_matched_not_the_whole_user_agent(
    mockserver: MockServer,
) -> None:
    robots = b"User-agent: badbot\nDisallow: /\n\nUser-agent: goodbot\nDisallow: /private\n"
    mockserver.set_robots("site.test", Reply(body=robots))
    urls = [mockserver.url("site.test", p) for p in ("/public", "/private")]
    settings = {**OURS, "USER_AGENT": "GoodBot/1.0 (+https://badbot.example/why)"}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]


# Scrapy 2.19 deprecates the attribute (UserAgentMiddleware warns) but still uses it.
@pytest.mark.filterwarnings("ignore:The 'user_agent' spider attribute is deprecated")
@async_test
async def test_the_spiders_user_agent_names_the_crawler(mockserver: MockServer) -> None:
    class NamedSpider(RecordingSpider):
        name = "named"
        user_agent = "GoodBot/1.0"

    robots = b"User-agent: goodbot\nDisallow: /private\n"
    mockserver.set_robots("site.test", Reply(body=robots))
    urls = [mockserver.url("site.test", p) for p in ("/public", "/private")]
    result = await run_spider(NamedSpider, OURS, start_urls=urls)
    assert result.crawled == [urls[0]]
    # UserAgentMiddleware sends the same name to the site.
    assert {r.user_agent for r in mockserver.requests_for("site.test")} == {"GoodBot/1.0"}


# What is not checked.


@async_test
async def test_dont_obey_robotstxt_skips_the_check(mockserver: MockServer) -> None:
    mockserver.set_robots("closed.test", Reply(body=b"User-agent: *\nDisallow: /\n"))
    url = mockserver.url("closed.test", "/page")

    class DontObeySpider(RecordingSpider):
        name = "dont-obey"

        async def start(self) -> AsyncIterator[Request]:
            yield Request(url, meta={"dont_obey_robotstxt": True}, callback=self.parse)

    result = await run_spider(DontObeySpider, OURS)
    assert result.crawled == [url]
    assert robots_log(mockserver, "closed.test") == []
    # Offered and counted as such, never checked.
    counted = {k: v for k, v in result.stats.items() if k.startswith("robotrules/")}
    assert counted == {"robotrules/offered": 1, "robotrules/unchecked": 1}


@async_test
async def test_data_and_file_urls_are_never_checked(mockserver: MockServer, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<html>local</html>")
    urls = ["data:,hello", page.as_uri()]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert sorted(result.crawled) == sorted(urls)
    assert mockserver.requests == []
    assert stat(result, "allowed") == 0


@async_test
async def test_robots_txt_itself_is_allowed_without_waiting(mockserver: MockServer) -> None:
    mockserver.set_robots("site.test", Reply(body=b"User-agent: *\nDisallow: /\n"))
    url = mockserver.url("site.test", "/robots.txt")
    result = await run_spider(RecordingSpider, OURS, start_urls=[url])
    assert result.crawled == [url]
    # The spider's own request only: no fetch of ours was needed.
    assert stat(result, "request_count") == 0


@async_test
async def test_robotstxt_obey_off_turns_it_all_off(mockserver: MockServer) -> None:
    mockserver.set_robots("closed.test", Reply(body=b"User-agent: *\nDisallow: /\n"))
    url = mockserver.url("closed.test", "/page")
    result = await run_spider(RecordingSpider, {**OURS, "ROBOTSTXT_OBEY": False}, start_urls=[url])
    assert result.crawled == [url]
    assert robots_log(mockserver, "closed.test") == []


# Crawl-delay and Request-rate.


async def _paced_crawl(
    mockserver: MockServer, robots: bytes, settings: dict[str, Any], count: int = 4
) -> tuple[CrawlResult[RecordingSpider], list[float]]:
    mockserver.set_robots("slow.test", Reply(body=robots))
    urls = [mockserver.url("slow.test", f"/{n}") for n in range(count)]
    result = await run_spider(RecordingSpider, {**OURS, **settings}, start_urls=urls)
    assert len(result.crawled) == count
    pages = [r for r in mockserver.requests_for("slow.test") if r.path != "/robots.txt"]
    return result, gaps(pages)


NO_JITTER = {"DOWNLOAD_DELAY_JITTER": 0}


@async_test
async def test_crawl_delay_spaces_the_requests_to_an_origin(mockserver: MockServer) -> None:
    robots = b"User-agent: *\nCrawl-delay: 0.5\n"
    result, spacing = await _paced_crawl(mockserver, robots, NO_JITTER)
    assert min(spacing) >= 0.45
    assert stat(result, "crawl_delay/applied") >= 1


@async_test
async def test_crawl_delay_is_kept_even_by_the_shortest_random_gap(
    mockserver: MockServer,
) -> None:
    robots = b"User-agent: *\nCrawl-delay: 0.3\n"
    _, spacing = await _paced_crawl(mockserver, robots, {"DOWNLOAD_DELAY_JITTER": 0.5}, count=3)
    assert min(spacing) >= 0.27


@async_test
async def test_request_rate_is_a_delay_too(mockserver: MockServer) -> None:
    robots = b"User-agent: *\nRequest-rate: 2/1s\n"
    _, spacing = await _paced_crawl(mockserver, robots, NO_JITTER, count=3)
    assert min(spacing) >= 0.45


@async_test
async def test_crawl_delay_is_bounded_by_robotrules_max_crawl_delay(
    mockserver: MockServer,
) -> None:
    robots = b"User-agent: *\nCrawl-delay: 30\n"
    settings = {**NO_JITTER, "ROBOTRULES_MAX_CRAWL_DELAY": 0.3}
    _, spacing = await _paced_crawl(mockserver, robots, settings, count=3)
    assert min(spacing) >= 0.27
    assert max(spacing) < 2


@async_test
async def test_crawl_delay_can_be_ignored(mockserver: MockServer) -> None:
    robots = b"User-agent: *\nCrawl-delay: 5\n"
    settings = {**NO_JITTER, "ROBOTRULES_CRAWL_DELAY": False}
    result, spacing = await _paced_crawl(mockserver, robots, settings)
    assert max(spacing) < 0.5
    assert stat(result, "crawl_delay/applied") == 0


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
    result, spacing = await _paced_crawl(mockserver, robots, settings)
    # AutoThrottle did lower the slot's delay after responses...
    assert result.messages("slot: slow.test")
    # ...and the Crawl-delay floor was put back each time.
    assert min(spacing) >= 0.45


# Signals, stats and logs.


@async_test
async def test_robots_parsed_and_robotrules_fetched_are_sent(mockserver: MockServer) -> None:
    robots = PRIVATE + b"Sitemap: /sitemap.xml\n"
    mockserver.set_robots("site.test", Reply(body=robots))
    mockserver.set_robots("gone.test", Reply(404))
    urls = [mockserver.url("site.test", "/private"), mockserver.url("gone.test", "/")]
    result = await run_spider(SignalSpider, OURS, start_urls=urls)
    spider = result.spider
    if compat.ROBOTS_PARSED is not None:  # Scrapy 2.18+; none sent before
        assert len(spider.parsed) == 1
        parser, request = spider.parsed[0]
        assert isinstance(parser, RobotParser)
        assert parser.allowed(urls[0], "AnyBot") is False
        assert parser.crawl_delay("AnyBot") is None
        assert request.url == urls[0]
    by_origin = {f["origin"]: f for f in spider.fetched}
    site = by_origin[mockserver.url("site.test", "")]
    assert site["outcome"] is Outcome.RULES
    assert site["status"] == 200
    assert isinstance(site["robots"], RobotsTxt)
    assert site["robots"].sitemaps == [mockserver.url("site.test", "/sitemap.xml")]
    gone = by_origin[mockserver.url("gone.test", "")]
    assert (gone["outcome"], gone["status"], gone["robots"]) == (Outcome.ALLOW_ALL, 404, None)


@async_test
async def test_stats_add_up_and_the_log_says_why(mockserver: MockServer) -> None:
    mockserver.set_robots("site.test", Reply(body=PRIVATE))
    mockserver.set_robots("down.test", Reply(503))
    urls = [
        mockserver.url("site.test", "/a"),
        mockserver.url("site.test", "/private/b"),
        mockserver.url("down.test", "/c"),
        "data:,unchecked",
    ]
    settings = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.3}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    checked = stat(result, "allowed") + stat(result, "forbidden") + stat(result, "unreachable")
    assert (stat(result, "allowed"), stat(result, "forbidden"), stat(result, "unreachable")) == (
        1,
        1,
        1,
    )
    assert checked == 3
    sent = stat(result, "request_count")
    answered = sum(v for k, v in result.stats.items() if "robotrules/response_status_count/" in k)
    failed = sum(v for k, v in result.stats.items() if "robotrules/exception_count/" in k)
    assert sent == answered + failed >= 2
    assert stat(result, "origins") == 2
    assert stat(result, "origins/unreachable") == 1
    assert stat(result, "evicted") == 0
    assert stat(result, "waiting/max") >= 1
    private = mockserver.url("site.test", "/private/b")
    assert result.messages(
        f"Forbidden by robots.txt: <GET {private}> disallowed by Disallow: /private (line 2)",
        logging.DEBUG,
    )
    assert result.messages("robots.txt unreachable: ", logging.WARNING)
    (summary,) = result.messages("robots.txt: 2 origins held", logging.INFO)
    assert "1 requests forbidden, 1 dropped as unreachable" in summary
    assert "slowest robots.txt: http://" in summary


@async_test
async def test_ignore_request_message_names_the_rule(mockserver: MockServer) -> None:
    mockserver.set_robots("site.test", Reply(body=b"# rules\nUser-agent: *\n\nDisallow: /x*y$\n"))
    url = mockserver.url("site.test", "/x-and-y")
    result = await run_spider(RecordingSpider, OURS, start_urls=[url])
    (exc,) = [e for _, e in result.failures]
    assert isinstance(exc, IgnoreRequest)
    assert str(exc) == "Forbidden by robots.txt: disallowed by Disallow: /x*y$ (line 4)"


# The manager on its own: origins, and decisions without a crawl.


class _Engine:
    """Answers robots.txt requests from a dict of URL to (status, body)."""

    def __init__(self, answers: dict[str, tuple[int, bytes]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def download_async(self, request: Request) -> Response:
        self.asked.append(request.url)
        status, body = self.answers[request.url]
        return Response(request.url, status=status, body=body, request=request)


def _manager(answers: dict[str, tuple[int, bytes]]) -> tuple[RobotsManager, _Engine]:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    engine = _Engine(answers)
    crawler.engine = engine  # type: ignore[assignment]
    return RobotsManager.for_crawler(crawler), engine


@async_test
async def test_http_and_https_are_different_origins() -> None:
    manager, engine = _manager(
        {
            "http://site.test/robots.txt": (200, b"User-agent: *\nDisallow: /a\n"),
            "https://site.test/robots.txt": (200, b"User-agent: *\nDisallow: /b\n"),
            "http://site.test:8080/robots.txt": (404, b""),
        }
    )

    def decide(request: Request) -> Deferred[Decision]:
        # A task under asyncio, as Scrapy runs the middleware: the test itself runs as a Deferred.
        return deferred_from_coro(manager.decide(request))

    assert not (await decide(Request("http://site.test/a"))).allowed
    assert (await decide(Request("http://site.test/b"))).allowed
    assert (await decide(Request("https://site.test/a"))).allowed
    assert not (await decide(Request("https://site.test:443/b"))).allowed
    assert (await decide(Request("http://site.test:8080/a"))).allowed
    assert (await decide(Request("HTTP://SITE.TEST:80/a"))).allowed is False
    assert sorted(engine.asked) == sorted(
        [
            "http://site.test/robots.txt",
            "https://site.test/robots.txt",
            "http://site.test:8080/robots.txt",
        ]
    )
    assert len(manager.db) == 3


@async_test
async def test_decide_now_starts_the_fetch_and_decides_once_it_is_done() -> None:
    manager, engine = _manager({"http://site.test/robots.txt": (200, PRIVATE)})
    request = Request("http://site.test/private/x")
    assert manager.decide_now(request) is None
    assert manager.decide_now(request) is None
    decision = await deferred_from_coro(manager.decide(request))
    assert not decision.allowed
    assert decision.reason == "disallowed by Disallow: /private (line 2)"
    now = manager.decide_now(Request("http://site.test/public"))
    assert now is not None
    assert now.allowed
    assert engine.asked == ["http://site.test/robots.txt"]


def test_the_manager_is_one_per_crawler() -> None:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    assert RobotsManager.for_crawler(crawler) is RobotsManager.for_crawler(crawler)
    other = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    assert RobotsManager.for_crawler(other) is not RobotsManager.for_crawler(crawler)


def test_checks_skips_what_robots_txt_has_no_say_on() -> None:
    manager, _ = _manager({})
    assert manager.checks(Request("http://site.test/"))
    assert not manager.checks(Request("http://site.test/", meta={"dont_obey_robotstxt": True}))
    assert not manager.checks(Request("data:,x"))
    assert not manager.checks(Request("file:///page.html"))
