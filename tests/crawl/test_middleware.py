"""RobotRulesMiddleware in real crawls: SPEC 8 against a server that misbehaves on cue.

Each test scripts what a site's robots.txt does (``MockServer.set_robots``),
crawls it with Scrapy and the add-on, and checks what was crawled, what was
dropped and why, what the server saw, and the ``robotrules/`` stats.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from scrapy_robotrules import Decision, Outcome, RobotParser, RobotsTxt
from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl import signals as robotrules_signals
from scrapy_robotrules.crawl.manager import RobotsManager
from tests.helpers.crawling import (
    RecordingSpider,
    as_scrapy_runs,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import (
    OURS,
    PRIVATE,
    stat,
)

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
    [unreachable] = result.messages("robots.txt unreachable: http", logging.WARNING)
    assert "(HTTP 503); its requests are parked, next try in " in unreachable
    down = mockserver.url("down.test", "")
    [dropping] = result.messages("robots.txt unreachable: dropping", logging.WARNING)
    assert dropping == (
        f"robots.txt unreachable: dropping 1 request for {down}, parked for 0.3 s (HTTP 503)"
    )
    (summary,) = result.messages("robots.txt: files kept for 2 origins", logging.INFO)
    assert "1 request forbidden, 1 dropped as unreachable" in summary
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

    def decide(request: Request) -> Awaitable[Decision]:
        # A task under asyncio, as Scrapy runs the middleware: the test itself runs as a Deferred.
        return as_scrapy_runs(manager.decider.decide(request))

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
    assert manager.decider.decide_now(request) is None
    assert manager.decider.decide_now(request) is None
    decision = await as_scrapy_runs(manager.decider.decide(request))
    assert not decision.allowed
    assert decision.reason == "disallowed by Disallow: /private (line 2)"
    now = manager.decider.decide_now(Request("http://site.test/public"))
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
    assert manager.decider.checks(Request("http://site.test/"))
    assert not manager.decider.checks(
        Request("http://site.test/", meta={"dont_obey_robotstxt": True})
    )
    assert not manager.decider.checks(Request("data:,x"))
    assert not manager.decider.checks(Request("file:///page.html"))
