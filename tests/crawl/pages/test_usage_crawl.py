"""Usage preferences in real crawls: a local site carrying each signal.

robots.txt rules with and without paths decide before download; headers and
meta tags mark or drop the items of the responses that carry them; every
response has its view in ``response.meta["robotrules_usage"]``.
"""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.settings import Settings

from scrapy_robotrules.crawl.config.settings import RobotRulesConfig, RobotRulesSettingError
from scrapy_robotrules.crawl.pages.usage import UsageItemsMiddleware, UsagePreferencesMiddleware
from tests.helpers.crawling import (
    MANY_HEADERS,
    CrawlResult,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    not_reactorless,
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.usage import HTML, SETTINGS, UsageSpider, html

CRAWL_TESTS = True

HOST = "site.test"

ROBOTS = b"""\
User-Agent: *
Content-Signal: search=yes, ai-input=no
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
Content-Usage: /broken/ train-ai=maybe,,
"""


PAGES: dict[str, Reply] = {
    "/plain": Reply(body=html(), headers=HTML),
    "/never/x": Reply(body=html(), headers=HTML),
    "/ai-ok/x": Reply(body=html(), headers=HTML),
    "/ai-ok/header-no": Reply(body=html(), headers={**HTML, "Content-Usage": "train-ai=n"}),
    "/ai-ok/header-broken": Reply(body=html(), headers={**HTML, "Content-Usage": "TRAIN-AI=n"}),
    "/ai-ok/tdm-header": Reply(body=html(), headers={**HTML, "tdm-reservation": "1"}),
    "/ai-ok/tdm-meta": Reply(
        body=html(("tdm-reservation", "1"), ("tdm-policy", "https://p.test/policy")),
        headers={**HTML, "tdm-reservation": "0"},
    ),
    "/ai-ok/signal-header": Reply(body=html(), headers={**HTML, "Content-Signal": "ai-train=no"}),
    "/broken/x": Reply(body=html(), headers=HTML),
}


async def crawl(
    mockserver: MockServer, settings: dict[str, Any] | None = None
) -> CrawlResult[UsageSpider]:
    mockserver.set_robots(HOST, Reply(body=ROBOTS))
    for path, reply in PAGES.items():
        mockserver.set_page(HOST, path, reply)
    urls = [mockserver.url(HOST, path) for path in PAGES]
    return await run_spider(UsageSpider, {**SETTINGS, **(settings or {})}, start_urls=urls)


def fetched(mockserver: MockServer, path: str) -> bool:
    return bool(mockserver.requests_for(HOST, path))


@async_test
async def test_default_only_records(mockserver: MockServer) -> None:
    result = await crawl(mockserver)
    views = result.spider.views
    # No purpose declared: everything robots.txt allows is fetched, nothing marked.
    assert set(views) == set(PAGES) - {"/never/x"}
    assert {item["url"] for item in result.spider.items} == set(views)
    assert not any("robotrules_usage_refused" in item for item in result.spider.items)
    # robots.txt, without and with a path (attach §3.4).
    assert views["/plain"].state("train-ai") == "disallowed"
    assert views["/plain"].state("search") == "allowed"
    assert views["/plain"].state("ai-input") == "disallowed"
    assert views["/ai-ok/x"].state("train-ai") == "allowed"
    # Headers: a Content-Usage "n" wins over robots.txt's "y" (vocab §5.1); unparsable: unknown.
    assert views["/ai-ok/header-no"].state("train-ai") == "disallowed"
    assert views["/ai-ok/header-broken"].state("train-ai") == "allowed"
    assert views["/ai-ok/header-broken"].statements[-1].error
    assert views["/ai-ok/signal-header"].state("train-ai") == "disallowed"
    # TDMRep: header, and meta over header.
    assert views["/ai-ok/tdm-header"].state("tdm") == "disallowed"
    assert views["/ai-ok/tdm-meta"].state("tdm") == "disallowed"
    assert views["/ai-ok/tdm-meta"].tdm_policy == "https://p.test/policy"
    assert views["/broken/x"].state("train-ai") == "unknown"
    stats = result.stats
    assert stats["robotrules/usage/train-ai/disallowed"] >= 3
    assert stats["robotrules/usage/unparsable"] == 2
    assert "robotrules/usage/forbidden" not in stats
    # Nothing can be refused: the middleware reads, and leaves what callbacks yield alone.
    middleware = result.crawler.get_spider_middleware(UsagePreferencesMiddleware)
    assert middleware is not None
    assert not hasattr(middleware, "process_spider_output")


@async_test
async def test_purpose_refused_by_robots_txt_is_never_downloaded(mockserver: MockServer) -> None:
    result = await crawl(mockserver, {"ROBOTRULES_PURPOSES": ["train-ai"]})
    # robots.txt refuses train-ai outside /ai-ok/: dropped before download.
    assert not fetched(mockserver, "/plain")
    assert fetched(mockserver, "/ai-ok/x")
    assert fetched(mockserver, "/broken/x")  # unknown is no refusal
    assert result.stats["robotrules/usage/forbidden"] == 1
    assert result.stats["robotrules/forbidden"] == 2  # with /never/x
    # Only the response says so: its items are marked (the default), not dropped.
    marks: dict[str, Any] = {
        item["url"]: item.get("robotrules_usage_refused") for item in result.spider.items
    }
    assert marks["/ai-ok/x"] is None
    assert marks["/ai-ok/header-no"].startswith("train-ai: disallowed <- Content-Usage header 1")
    assert marks["/ai-ok/signal-header"]
    assert marks["/ai-ok/tdm-header"] is None  # tdm was not declared
    assert result.stats["robotrules/usage/items/marked"] == 2
    middleware = result.crawler.get_spider_middleware(UsagePreferencesMiddleware)
    assert isinstance(middleware, UsageItemsMiddleware)


@async_test
async def test_drop_items_and_tdm_purpose(mockserver: MockServer) -> None:
    result = await crawl(
        mockserver, {"ROBOTRULES_PURPOSES": ["tdm"], "ROBOTRULES_USAGE_ITEMS": "drop"}
    )
    got = {item["url"] for item in result.spider.items}
    assert "/ai-ok/tdm-header" not in got
    assert "/ai-ok/tdm-meta" not in got
    assert "/plain" in got  # train-ai refused, but the crawl is for tdm only
    assert result.stats["robotrules/usage/items/dropped"] == 2


@pytest.mark.parametrize(
    ("value", "expected"),
    [([], ()), ("train-ai, tdm", ("train-ai", "tdm")), (["search", "search"], ("search",))],
)
def test_purposes_setting(value: object, expected: tuple[str, ...]) -> None:
    config = RobotRulesConfig.from_settings(Settings({"ROBOTRULES_PURPOSES": value}), agent=False)
    assert config.purposes == expected


@pytest.mark.parametrize("value", [["training"], 3, "train-ai,bogus", [None]])
def test_purposes_setting_rejects(value: object) -> None:
    with pytest.raises(RobotRulesSettingError, match="ROBOTRULES_PURPOSES"):
        RobotRulesConfig.from_settings(Settings({"ROBOTRULES_PURPOSES": value}), agent=False)


@not_reactorless(MANY_HEADERS)
@async_test
async def test_every_header_line_is_read(mockserver: MockServer) -> None:
    # A thousand lines, the refusal last: no line is dropped, the refusal
    # counts, and explain() names the line that decided.
    flood = {
        "/usage-lines": ("Content-Usage", "train-ai=y", "train-ai=n"),
        "/signal-lines": ("Content-Signal", "ai-train=yes", "ai-train=no"),
    }
    for path, (name, consent, refusal) in flood.items():
        lines = ((name, consent),) * 999 + ((name, refusal),)
        mockserver.set_page(HOST, path, Reply(body=html(), headers=HTML, header_lines=lines))
    urls = [mockserver.url(HOST, path) for path in flood]
    settings = {**SETTINGS, "ROBOTRULES_PURPOSES": ["train-ai"]}
    result = await run_spider(UsageSpider, settings, start_urls=urls)
    views = result.spider.views
    usage, signal = views["/usage-lines"], views["/signal-lines"]
    assert usage.state("train-ai") == signal.state("train-ai") == "disallowed"
    assert usage.explain()[0] == "train-ai: disallowed <- Content-Usage header 1000: 'train-ai=n'"
    assert usage.explain()[-2].startswith("Content-Usage: 1000 header lines read as one field")
    assert signal.explain()[0] == (
        "train-ai: disallowed <- Content-Signal header 1000: 'ai-train=no'"
    )
    assert signal.explain()[-2].startswith("Content-Signal: 1000 header lines read")
    marks = {item["url"]: item.get("robotrules_usage_refused") for item in result.spider.items}
    assert all(marks[path] for path in flood)
    assert result.stats["robotrules/usage/train-ai/disallowed"] == 2
