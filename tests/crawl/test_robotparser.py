"""RobotParser: the rules engine behind Scrapy's ROBOTSTXT_PARSER interface."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from scrapy import Request, Spider
from scrapy.core.engine import ExecutionEngine
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import TextResponse
from scrapy.robotstxt import ProtegoRobotParser
from scrapy.robotstxt import RobotParser as ScrapyRobotParser
from scrapy.settings import Settings
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_robotrules import RobotParser, RobotRulesSettingError
from scrapy_robotrules.crawl import compat
from tests.helpers.crawling import (
    RecordingSpider,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply

CRAWL_TESTS = True

FOLDER = b"User-agent: *\nDisallow: /folder1/\nAllow: /folder1/myfile.html\nCrawl-delay: 2.5\n"


def parser(body: bytes, settings: dict[str, Any] | None = None) -> RobotParser:
    return RobotParser.from_crawler(get_crawler(settings_dict=settings), body)


def test_it_is_a_scrapy_robot_parser() -> None:
    assert issubclass(RobotParser, ScrapyRobotParser)
    assert isinstance(parser(b""), ScrapyRobotParser)


def test_allowed_takes_str_and_bytes_and_a_full_user_agent() -> None:
    rp = parser(FOLDER)
    assert rp.allowed("http://site.test/folder1/myfile.html", "MyBot/1.0 (+https://x)")
    assert not rp.allowed(b"http://site.test/folder1/other", b"MyBot/1.0")
    assert rp.allowed("http://site.test/robots.txt", "MyBot")
    assert rp.crawl_delay("MyBot/1.0") == 2.5
    assert rp.crawl_delay(b"mybot") == 2.5


def test_precedence_and_agent_match_come_from_the_settings() -> None:
    url = "http://site.test/folder1/myfile.html"
    assert parser(FOLDER).allowed(url, "MyBot")
    assert not parser(FOLDER, {"ROBOTRULES_PRECEDENCE": "first-match"}).allowed(url, "MyBot")
    bots = b"User-agent: bot\nDisallow: /\n"
    assert parser(bots).allowed(url, "RoboBot")
    assert not parser(bots, {"ROBOTRULES_AGENT_MATCH": "substring"}).allowed(url, "RoboBot")


def test_explain_names_the_rule() -> None:
    decision = parser(FOLDER).explain("http://site.test/folder1/x", "MyBot")
    assert decision.reason == "disallowed by Disallow: /folder1/ (line 2)"


def test_bytes_that_are_not_utf8_keep_their_meaning() -> None:
    body = b"User-agent: *\nDisallow: /caf\xe9/\n"
    ours, protego = parser(body), ProtegoRobotParser.from_crawler(get_crawler(), body)
    # Protego decodes with errors="ignore": the rule becomes "Disallow: /caf/".
    assert not protego.allowed("http://site.test/caf/menu", "MyBot")
    assert ours.allowed("http://site.test/caf/menu", "MyBot")
    assert not ours.allowed("http://site.test/caf%E9/menu", "MyBot")


def test_robotrules_max_size_applies() -> None:
    body = b"User-agent: *\nDisallow: /a\nDisallow: /b\n"
    rp = parser(body, {"ROBOTRULES_MAX_SIZE": len(b"User-agent: *\nDisallow: /a\n")})
    assert (rp.allowed("/a", "x"), rp.allowed("/b", "x")) == (False, True)
    assert rp.robots.truncated


def test_a_bad_setting_is_reported_when_the_parser_is_built() -> None:
    with pytest.raises(ValueError, match="ROBOTRULES_PRECEDENCE must be one of"):
        parser(b"", {"ROBOTRULES_PRECEDENCE": "longest"})


def mock_crawler(settings: dict[str, Any] | None = None) -> mock.MagicMock:
    """A crawler as Scrapy's own middleware tests build it: a MagicMock with real settings.

    Its ``spider`` is a MagicMock too, which answers every attribute name
    (``robotrules_precedence``, ``user_agent``...) with another Mock.
    """
    crawler = mock.MagicMock()
    crawler.settings = Settings(settings)
    return crawler


def test_a_mock_spider_has_no_robotrules_attributes() -> None:
    crawler = mock_crawler({"ROBOTRULES_PRECEDENCE": "first-match"})
    rp = RobotParser.from_crawler(crawler, FOLDER)
    assert (rp.precedence, rp.agent_match, rp.user_agent) == ("first-match", "token", None)
    assert not rp.allowed("http://site.test/folder1/myfile.html", "MyBot")
    assert rp.allowed("http://site.test/other", "MyBot")
    named = RobotParser.from_crawler(mock_crawler({"ROBOTRULES_USER_AGENT": "Named/1.0"}), FOLDER)
    assert named.user_agent == "Named/1.0"


class _BadPrecedence(Spider):
    name = "bad"
    robotrules_precedence = 5


def test_a_real_spiders_attribute_of_the_wrong_type_is_still_an_error() -> None:
    crawler = mock_crawler()
    crawler.spider = _BadPrecedence()
    with pytest.raises(RobotRulesSettingError) as raised:
        RobotParser.from_crawler(crawler, FOLDER)
    assert str(raised.value) == (
        "robotrules_precedence (attribute of spider 'bad') must be one of"
        " 'most-specific', 'first-match', 'allow-first', not 5"
    )


@pytest.mark.skipif(
    not hasattr(ExecutionEngine, "download_async"), reason="Scrapy's tests of 2.14+ mock this"
)
@async_test
async def test_scrapys_own_middleware_test_setup_runs_with_it() -> None:
    """Scrapy's ``test_robotstxt``, with ``ROBOTSTXT_PARSER`` set to this parser."""
    crawler = mock_crawler(
        {"ROBOTSTXT_OBEY": True, "ROBOTSTXT_PARSER": "scrapy_robotrules.RobotParser"}
    )
    robots = TextResponse(
        "http://site.local/robots.txt", body=b"User-Agent: *\nDisallow: /admin/\n"
    )
    crawler.engine.download_async = mock.AsyncMock(return_value=robots)
    crawler.signals.send_catch_log_async = mock.AsyncMock(return_value=[])
    middleware = build_from_crawler(RobotsTxtMiddleware, crawler)
    await middleware.process_request(Request("http://site.local/allowed"))
    with pytest.raises(IgnoreRequest):
        await middleware.process_request(Request("http://site.local/admin/main"))
    assert isinstance(await middleware.robot_parser(Request("http://site.local/")), RobotParser)


class ParsedSpider(RecordingSpider):
    name = "parsed"
    parsers: list[Any]

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> ParsedSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, ParsedSpider)
        spider.parsers = []
        if compat.ROBOTS_PARSED is not None:  # Scrapy 2.18+
            crawler.signals.connect(spider.on_parsed, signal=compat.ROBOTS_PARSED)
        return spider

    def on_parsed(self, robotparser: Any, request: Request) -> None:
        self.parsers.append(robotparser)


@async_test
async def test_scrapys_own_middleware_uses_it_with_robotstxt_parser(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("site.test", Reply(body=FOLDER))
    urls = [mockserver.url("site.test", p) for p in ("/folder1/myfile.html", "/folder1/x")]
    settings = {
        "ROBOTSTXT_OBEY": True,
        "ROBOTSTXT_PARSER": "scrapy_robotrules.RobotParser",
        "ROBOTRULES_PRECEDENCE": "first-match",
    }
    result = await run_spider(ParsedSpider, settings, start_urls=urls)
    # First-match: Disallow: /folder1/ comes first and decides both.
    assert result.crawled == []
    assert sorted(result.ignored) == sorted(urls)
    assert result.stats["robotstxt/request_count"] == 1
    assert "robotrules/request_count" not in result.stats
    if compat.ROBOTS_PARSED is not None:  # Scrapy 2.18+; none sent before
        (rp,) = result.spider.parsers
        assert isinstance(rp, RobotParser)
        assert rp.precedence == "first-match"
