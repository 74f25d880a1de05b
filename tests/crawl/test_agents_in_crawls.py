"""Who is asked about in real crawls: the agent, its overrides per spider, and what is never
checked (SPEC 3, 7).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from scrapy import Request

from tests.helpers.crawling import (
    RecordingSpider,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import (
    OURS,
    robots_log,
    stat,
)

CRAWL_TESTS = True
"""Run under both reactors in CI, the manager tests without a server too."""


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
    assert counted == {
        "robotrules/offered": 1,
        "robotrules/unchecked": 1,
        # Set at every close (the Spidermon monitors read it).
        "robotrules/origins/unreachable_at_close": 0,
    }


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
