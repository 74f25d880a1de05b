"""Page-level rules in real crawls: a local site whose pages carry every form of them.

Every page of the site is fetched at a start URL; its callback yields one
item and one request for ``/from<path>``, and follows its ``<a>`` links. So
whether ``/from<path>`` was requested shows whether nofollow was obeyed,
and the item shows whether noindex was.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import scrapy
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from scrapy_robotrules import Addon, PageDirectives, PageNofollow
from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.config.settings import RobotRulesConfig, RobotRulesSettingError
from scrapy_robotrules.crawl.pages.directive_middleware import (
    META_KEY,
    PageDirectivesMiddleware,
    _Output,
)
from scrapy_robotrules.crawl.pages.usage import META_KEY as USAGE_KEY
from tests.helpers.crawling import (
    MANY_HEADERS,
    CrawlResult,
    RecordingSpider,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    not_reactorless,
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply

CRAWL_TESTS = True

HOST = "site.test"
AGENT = "ExampleBot/1.0 (+https://example.test/bot)"
HTML = {"Content-Type": "text/html; charset=utf-8"}
SETTINGS = {"ADDONS": {"scrapy_robotrules.Addon": 0}, "ROBOTSTXT_OBEY": True, "USER_AGENT": AGENT}
HUGE = "nosnippet, " + "x" * 8000


def html(*metas: tuple[str, str], links: str = "") -> bytes:
    tags = "".join(f'<meta name="{name}" content="{content}">' for name, content in metas)
    return f"<html><head><title>t</title>{tags}</head><body>{links}</body></html>".encode()


PAGES: dict[str, Reply] = {
    "/plain": Reply(body=html(), headers=HTML),
    "/header-only": Reply(body=html(), headers={**HTML, "X-Robots-Tag": "noindex, nofollow"}),
    "/meta-only": Reply(body=html(("robots", "noindex, nofollow")), headers=HTML),
    "/disagree": Reply(
        body=html(("robots", "index, follow")), headers={**HTML, "X-Robots-Tag": "noindex"}
    ),
    "/for-us": Reply(
        body=html(("examplebot", "noindex")),
        headers={**HTML, "X-Robots-Tag": "ExampleBot: nofollow"},
    ),
    "/for-other": Reply(
        body=html(("otherbot", "none")),
        headers={**HTML, "X-Robots-Tag": "otherbot: noindex, nofollow"},
    ),
    "/several": Reply(
        body=html(("robots", "noarchive"), ("examplebot", "max-snippet: 20")),
        headers=HTML,
        header_lines=(("X-Robots-Tag", "nosnippet"), ("X-Robots-Tag", "nofollow")),
    ),
    "/expired": Reply(
        body=html(("robots", "unavailable_after: 1 Jan 2001 00:00:00 GMT")), headers=HTML
    ),
    "/future": Reply(
        body=html(), headers={**HTML, "X-Robots-Tag": "unavailable_after: 2999-12-31T00:00:00Z"}
    ),
    "/doc.pdf": Reply(
        body=b'%PDF-1.4 <meta name="robots" content="noarchive">',
        headers={"Content-Type": "application/pdf", "X-Robots-Tag": "noindex, nofollow"},
    ),
    "/image.png": Reply(
        body=b"\x89PNG\r\n\x1a\n",
        headers={"Content-Type": "image/png", "X-Robots-Tag": "examplebot: noindex"},
    ),
    "/malformed": Reply(
        body=html(("robots", "unavailable_after: someday, max-snippet: lots, &&&, :,,")),
        headers={**HTML, "X-Robots-Tag": "max-image-preview: enormous, ::::, frobnicate"},
    ),
    "/huge": Reply(
        body=html(),
        headers=HTML,
        header_lines=(*(("X-Robots-Tag", HUGE),) * 40, ("X-Robots-Tag", "noindex")),
    ),
    "/links": Reply(
        body=html(
            links='<a href="/to/plain">a</a> <a rel="nofollow" href="/to/nofollow">b</a>'
            ' <a rel="Sponsored NoFollow" href=" /to/nofollow-too#x ">c</a>'
        ),
        headers=HTML,
    ),
}


class PageSpider(RecordingSpider):
    """Yields an item and a ``/from<path>`` request per page, and follows ``<a>`` links."""

    item_factory: Any = dict

    def __init__(self, *args: Any, request_meta: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.items: list[Any] = []
        self.pages: dict[str, PageDirectives | None] = {}
        self.request_meta = request_meta or {}

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> PageSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, PageSpider)
        crawler.signals.connect(spider.on_item, signal=signals.item_scraped)
        return spider

    def on_item(self, item: Any) -> None:
        self.items.append(item)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        self.crawled.append(response.url)
        path = urlsplit(response.url).path
        self.pages[path] = response.meta.get(META_KEY)
        if path.startswith(("/from/", "/to/")):
            return
        yield self.item_factory(url=path)
        yield Request(response.urljoin("/from" + path), meta=dict(self.request_meta))
        if isinstance(response, TextResponse):
            for href in response.css("a::attr(href)").getall():
                yield Request(response.urljoin(href.strip()), meta=dict(self.request_meta))


async def crawl(
    mockserver: MockServer,
    settings: dict[str, Any] | None = None,
    spider: type[PageSpider] = PageSpider,
    **kwargs: Any,
) -> CrawlResult[PageSpider]:
    for path, reply in PAGES.items():
        mockserver.set_page(HOST, path, reply)
    urls = [mockserver.url(HOST, path) for path in PAGES]
    return await run_spider(spider, {**SETTINGS, **(settings or {})}, start_urls=urls, **kwargs)


def followed(mockserver: MockServer, path: str) -> bool:
    return bool(mockserver.requests_for(HOST, "/from" + path))


def marks(result: CrawlResult[PageSpider]) -> dict[str, Any]:
    return {item["url"]: item.get("robotrules_noindex") for item in result.spider.items}


@async_test
async def test_every_form_with_the_defaults(mockserver: MockServer) -> None:
    result = await crawl(mockserver)
    # Every response carries its rules, HTML or not.
    pages = {p: page for p, page in result.spider.pages.items() if page is not None}
    assert set(pages) == set(result.spider.pages)
    assert set(PAGES) <= set(pages)

    # nofollow obeyed: the header, the meta tag, the crawler-specific header, a PDF.
    not_followed = {"/header-only", "/meta-only", "/for-us", "/several", "/doc.pdf"}
    for path in PAGES:
        assert followed(mockserver, path) is (path not in not_followed), path

    # noindex (and a passed unavailable_after) marks the items, never drops them.
    got = marks(result)
    assert set(got) == set(PAGES)
    marked = {"/header-only", "/meta-only", "/disagree", "/for-us", "/expired", "/doc.pdf"}
    marked |= {"/image.png", "/huge"}
    assert {path for path, mark in got.items() if mark} == marked
    assert got["/header-only"].startswith("noindex: noindex (for every crawler; X-Robots-Tag")
    assert got["/expired"] == "unavailable_after 2001-01-01T00:00:00+00:00 has passed"

    # Both disagreeing: the more restrictive rule of each pair applies.
    assert pages["/disagree"].noindex
    assert not pages["/disagree"].nofollow
    # For this crawler (header and meta), and for another (neither).
    assert pages["/for-us"].restrictions == {"noindex", "nofollow"}
    assert pages["/for-other"].restrictions == frozenset()
    assert len(pages["/for-other"].other_crawlers) == 3
    # Several headers and tags add up.
    several = pages["/several"]
    assert several.restrictions == {"nosnippet", "nofollow", "noarchive"}
    assert several.max_snippet == 0
    # The future date restricts nothing yet.
    assert pages["/future"].unavailable_after is not None
    assert not pages["/future"].excluded()
    # Non-HTML: the header counts, the body is not read.
    assert pages["/doc.pdf"].restrictions == {"noindex", "nofollow"}
    assert pages["/image.png"].restrictions == {"noindex"}
    # Malformed values: no effect, reported.
    malformed = pages["/malformed"]
    assert malformed.restrictions == frozenset()
    assert [d.name for d in malformed.malformed] == [
        "max-image-preview",
        "unavailable_after",
        "max-snippet",
    ]
    assert [d.name for d in malformed.unknown] == ["frobnicate", "&&&"]
    # Huge headers: each read up to its cap, and the line after them still counts.
    huge = pages["/huge"]
    assert huge.restrictions == {"nosnippet", "noindex"}
    assert not huge.truncated
    # rel=nofollow links are followed by default.
    assert mockserver.requests_for(HOST, "/to/nofollow")

    stats = result.stats
    assert stats["robotrules/page/directive/noindex"] == 7
    assert stats["robotrules/page/directive/nofollow"] == 5
    assert stats["robotrules/page/directive/unavailable_after/passed"] == 1
    assert stats["robotrules/page/requests/nofollow"] == 5
    assert stats["robotrules/page/items/marked"] == 8
    assert stats["robotrules/page/malformed"] == 1
    assert "robotrules/page/truncated" not in stats
    assert stats["robotrules/page/other_crawler"] == 1
    assert "robotrules/page/items/dropped" not in stats
    drops = result.messages("from " + mockserver.url(HOST, "/header-only"), logging.DEBUG)
    assert drops == [
        f"Dropped <GET {mockserver.url(HOST, '/from/header-only')}> from"
        f" {mockserver.url(HOST, '/header-only')}: the page says nofollow (for every crawler;"
        " X-Robots-Tag header 1: 'noindex, nofollow')"
    ]
    summary = result.messages("page directives:", logging.INFO)
    assert len(summary) == 1
    assert "requests dropped: 5 for nofollow, 0 for rel=nofollow links" in summary[0]
    assert "noindex items: 8 marked" in summary[0]


@async_test
async def test_noindex_drop_and_nofollow_off(mockserver: MockServer) -> None:
    settings = {"ROBOTRULES_PAGE_NOINDEX": "drop", "ROBOTRULES_PAGE_NOFOLLOW": False}
    result = await crawl(mockserver, settings)
    assert all(followed(mockserver, path) for path in PAGES)
    kept = set(marks(result))
    assert kept == set(PAGES) - {
        "/header-only",
        "/meta-only",
        "/disagree",
        "/for-us",
        "/expired",
        "/doc.pdf",
        "/image.png",
        "/huge",
    }
    assert result.stats["robotrules/page/items/dropped"] == 8
    # Dropped items are announced like a pipeline's DropItem.
    assert result.stats["item_dropped_count"] == 8
    assert "robotrules/page/requests/nofollow" not in result.stats


@async_test
async def test_noindex_ignore(mockserver: MockServer) -> None:
    result = await crawl(mockserver, {"ROBOTRULES_PAGE_NOINDEX": "ignore"})
    assert set(marks(result)) == set(PAGES)
    assert not any(marks(result).values())
    assert result.stats["robotrules/page/items/ignored"] == 8


@async_test
async def test_nofollow_links_when_asked(mockserver: MockServer) -> None:
    result = await crawl(mockserver, {"ROBOTRULES_PAGE_NOFOLLOW_LINKS": True})
    assert mockserver.requests_for(HOST, "/to/plain")
    assert not mockserver.requests_for(HOST, "/to/nofollow")
    assert not mockserver.requests_for(HOST, "/to/nofollow-too")
    assert result.stats["robotrules/page/requests/nofollow_link"] == 2


@async_test
async def test_a_request_can_opt_out(mockserver: MockServer) -> None:
    settings = {"ROBOTRULES_PAGE_NOFOLLOW_LINKS": True}
    opt_out = {"dont_obey_nofollow": True}
    result = await crawl(mockserver, settings, request_meta=opt_out)
    assert all(followed(mockserver, path) for path in PAGES)
    assert mockserver.requests_for(HOST, "/to/nofollow")
    assert result.stats["robotrules/page/requests/opted_out"] == 7
    assert "robotrules/page/requests/nofollow" not in result.stats


NOFOLLOWED = ("/header-only", "/meta-only", "/for-us", "/several", "/doc.pdf")
"""The pages whose rules say nofollow for this crawler."""


@async_test
async def test_a_nofollow_drop_is_told_with_request_dropped(mockserver: MockServer) -> None:
    result = await crawl(mockserver)
    expected = sorted(mockserver.url(HOST, "/from" + path) for path in NOFOLLOWED)
    assert sorted(result.spider.dropped) == expected
    assert result.failures == []


@async_test
async def test_the_summary_counts_one_response_in_the_singular(mockserver: MockServer) -> None:
    mockserver.set_page(
        HOST, "/one", Reply(body=html(), headers={**HTML, "X-Robots-Tag": "nofollow"})
    )
    result = await run_spider(PageSpider, SETTINGS, start_urls=[mockserver.url(HOST, "/one")])
    [summary] = result.messages("page directives:", logging.INFO)
    robots, page = summary.splitlines()
    assert robots.startswith(
        "robots.txt: files kept for 1 origin, 1 fetch (1 request), 0 requests forbidden,"
    )
    assert page == (
        "page directives: 1 response had rules for this crawler (nofollow 1);"
        " requests dropped: 1 for nofollow, 0 for rel=nofollow links; noindex items: none"
    )


class ErrbackPageSpider(PageSpider):
    """Gives every request it yields the errback that records failures."""

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        for each in super().parse(response, **kwargs):
            if isinstance(each, Request):
                yield each.replace(errback=partial(self.on_failure, each.url))
            else:
                yield each


@async_test
async def test_a_nofollow_drop_reaches_the_errback_with_why(mockserver: MockServer) -> None:
    result = await crawl(mockserver, spider=ErrbackPageSpider)
    failed = dict(result.failures)
    assert sorted(failed) == sorted(mockserver.url(HOST, "/from" + path) for path in NOFOLLOWED)
    assert all(isinstance(exc, PageNofollow) for exc in failed.values())
    why = failed[mockserver.url(HOST, "/from/header-only")]
    assert str(why) == (
        "Dropped for nofollow: the page says nofollow (for every crawler;"
        f" X-Robots-Tag header 1: 'noindex, nofollow') ({mockserver.url(HOST, '/header-only')})"
    )
    # Never downloaded, never a robots.txt verdict: counted as nofollow drops only.
    assert not any(followed(mockserver, path) for path in NOFOLLOWED)
    assert result.spider.dropped == []
    stats = result.stats
    assert stats["robotrules/page/requests/nofollow"] == 5
    assert "robotrules/forbidden" not in stats
    assert stats["robotrules/offered"] == stats["robotrules/allowed"]


@async_test
async def test_without_the_downloader_middleware_a_nofollow_drop_with_an_errback_is_dropped(
    mockserver: MockServer,
) -> None:
    # Nothing would raise why at the downloader: the drop is told with request_dropped.
    off = {"DOWNLOADER_MIDDLEWARES": {"scrapy_robotrules.RobotRulesMiddleware": None}}
    result = await crawl(mockserver, off, spider=ErrbackPageSpider)
    expected = sorted(mockserver.url(HOST, "/from" + path) for path in NOFOLLOWED)
    assert sorted(result.spider.dropped) == expected
    assert result.failures == []
    assert not any(followed(mockserver, path) for path in NOFOLLOWED)


class Page(scrapy.Item):
    url = scrapy.Field()


@dataclasses.dataclass
class MarkablePage:
    url: str
    robotrules_noindex: str | None = None


@async_test
async def test_items_that_cannot_be_marked_are_kept_counted_and_warned(
    mockserver: MockServer,
) -> None:
    class ItemSpider(PageSpider):
        item_factory = Page

    result = await crawl(mockserver, spider=ItemSpider)
    assert len(result.spider.items) == len(PAGES)
    assert result.stats["robotrules/page/items/unmarked"] == 8
    warnings = result.messages("has no 'robotrules_noindex' field", logging.WARNING)
    assert len(warnings) == 1


@async_test
async def test_dataclass_items_with_the_field_are_marked(mockserver: MockServer) -> None:
    class DataclassSpider(PageSpider):
        item_factory = MarkablePage

    result = await crawl(mockserver, spider=DataclassSpider)
    marked = {item.url for item in result.spider.items if item.robotrules_noindex}
    assert "/header-only" in marked
    assert len(marked) == 8


@async_test
async def test_another_field_name(mockserver: MockServer) -> None:
    result = await crawl(mockserver, {"ROBOTRULES_PAGE_NOINDEX_FIELD": "hidden"})
    hidden = {item["url"] for item in result.spider.items if item.get("hidden")}
    assert "/meta-only" in hidden
    assert not any(item.get("robotrules_noindex") for item in result.spider.items)


@async_test
async def test_without_robotstxt_obey_nothing_is_read(mockserver: MockServer) -> None:
    result = await crawl(mockserver, {"ROBOTSTXT_OBEY": False})
    assert set(result.spider.pages) >= set(PAGES)
    assert all(page is None for page in result.spider.pages.values())
    assert all(followed(mockserver, path) for path in PAGES)


def test_the_addon_enables_the_page_middleware() -> None:
    settings = Settings()
    Addon().update_settings(settings)
    priority = compat.component_priority(settings, "SPIDER_MIDDLEWARES", PageDirectivesMiddleware)
    assert priority == 950


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("ROBOTRULES_PAGE_NOINDEX", "hide", "one of 'mark', 'drop', 'ignore'"),
        ("ROBOTRULES_PAGE_NOFOLLOW", "maybe", "True or False"),
        ("ROBOTRULES_PAGE_NOFOLLOW_LINKS", 2, "True or False"),
        ("ROBOTRULES_PAGE_NOINDEX_FIELD", " ", "a non-empty item field name"),
        ("ROBOTRULES_PAGE_MAX_HTML", 0, "a whole number from 1 to 10000000"),
    ],
)
def test_page_settings_are_checked_at_start(name: str, value: object, expected: str) -> None:
    with pytest.raises(RobotRulesSettingError, match=f"^{name} must be {re.escape(expected)}"):
        RobotRulesConfig.from_settings(Settings({name: value, "USER_AGENT": AGENT}))


def test_page_settings_defaults_and_values() -> None:
    default = RobotRulesConfig.from_settings(Settings({"USER_AGENT": AGENT}))
    assert (default.page_nofollow, default.page_nofollow_links) == (True, False)
    assert (default.page_noindex, default.page_noindex_field) == ("mark", "robotrules_noindex")
    assert default.page_max_html == 262_144
    given = RobotRulesConfig.from_settings(
        Settings(
            {
                "USER_AGENT": AGENT,
                "ROBOTRULES_PAGE_NOFOLLOW": "false",
                "ROBOTRULES_PAGE_NOFOLLOW_LINKS": "1",
                "ROBOTRULES_PAGE_NOINDEX": "drop",
                "ROBOTRULES_PAGE_NOINDEX_FIELD": " seo_hidden ",
                "ROBOTRULES_PAGE_MAX_HTML": "4096",
            }
        )
    )
    assert (given.page_nofollow, given.page_nofollow_links) == (False, True)
    assert (given.page_noindex, given.page_noindex_field) == ("drop", "seo_hidden")
    assert given.page_max_html == 4096


@async_test
async def test_pages_without_rules_count_nothing(mockserver: MockServer) -> None:
    mockserver.set_page(HOST, "/plain", PAGES["/plain"])
    url = mockserver.url(HOST, "/plain")
    result = await run_spider(PageSpider, SETTINGS, start_urls=[url])
    assert result.spider.pages["/plain"] == PageDirectives(agent="examplebot")
    assert not [key for key in result.stats if key.startswith("robotrules/page/")]
    assert not result.messages("page directives:")


class AsyncPageSpider(PageSpider):
    """The same callback as an async generator: the middleware's async path."""

    async def parse(self, response: Response, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        for each in PageSpider.parse(self, response, **kwargs):
            yield each


@async_test
async def test_async_callbacks_are_judged_the_same(mockserver: MockServer) -> None:
    result = await crawl(mockserver, spider=AsyncPageSpider)
    assert not followed(mockserver, "/header-only")
    assert followed(mockserver, "/plain")
    assert marks(result)["/meta-only"]
    assert result.stats["robotrules/page/requests/nofollow"] == 5
    assert result.stats["robotrules/page/items/marked"] == 8


@async_test
async def test_a_page_without_rules_and_the_restricting_page_it_links_to(
    mockserver: MockServer,
) -> None:
    """``/plain`` (no rules, the only start URL) links to ``/meta-only`` (noindex, nofollow):
    the first page's output goes on as it is, the second's is judged."""
    plain = Reply(body=html(links='<a href="/meta-only">m</a>'), headers=HTML)
    mockserver.set_page(HOST, "/plain", plain)
    mockserver.set_page(HOST, "/meta-only", PAGES["/meta-only"])
    result = await run_spider(PageSpider, SETTINGS, start_urls=[mockserver.url(HOST, "/plain")])
    assert followed(mockserver, "/plain")
    assert not followed(mockserver, "/meta-only")
    marked = marks(result)
    assert marked["/plain"] is None
    assert marked["/meta-only"].startswith("noindex: ")
    assert result.stats["robotrules/page/requests/nofollow"] == 1


class RefusesNofollowPages:
    """A spider middleware before the page middleware that refuses the input of nofollow pages."""

    def process_spider_input(self, response: Response, spider: scrapy.Spider | None = None) -> None:
        if b"nofollow" in (response.headers.get("X-Robots-Tag") or b""):
            raise ValueError("refused")


class ErrbackOnInputSpider(PageSpider):
    """Start requests with an errback that, for a refused response, yields a request and an item."""

    async def start(self) -> AsyncIterator[Any]:
        for url in self.start_urls:
            yield Request(url, errback=self.refused)

    def refused(self, failure: Any) -> Iterator[Any]:
        url = failure.request.url
        path = urlsplit(url).path
        yield {"url": path}
        yield Request(urljoin(url, "/from" + path))


@async_test
async def test_an_errback_for_a_response_refused_before_the_page_middleware_is_judged(
    mockserver: MockServer,
) -> None:
    # The page middleware never saw the response's input: its rules are read
    # when the errback's output reaches it.
    for path in ("/header-only", "/plain"):
        mockserver.set_page(HOST, path, PAGES[path])
    settings = {**SETTINGS, "SPIDER_MIDDLEWARES": {RefusesNofollowPages: 940}}
    urls = [mockserver.url(HOST, path) for path in ("/header-only", "/plain")]
    spider: type[PageSpider] = ErrbackOnInputSpider
    result = await run_spider(spider, settings, start_urls=urls)
    assert not followed(mockserver, "/header-only")
    assert followed(mockserver, "/plain")
    assert marks(result)["/header-only"].startswith("noindex: ")
    assert result.stats["robotrules/page/requests/nofollow"] == 1


# Charsets that name no text encoding, and pages past ROBOTRULES_PAGE_MAX_HTML.


class BodyBlindSpider(RecordingSpider):
    """Records what the middlewares left on each response; never decodes the body.

    (Scrapy's own ``response.text`` raises on a charset naming a codec that
    is no text encoding: that is the spider's business, not this package's.)
    Each page yields an item, a request to ``/to<path>`` (linked with
    ``rel="nofollow"`` on the pages below) and one to ``/from<path>``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: dict[str, tuple[Any, Any]] = {}

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        self.crawled.append(response.url)
        path = urlsplit(response.url).path
        self.seen[path] = (response.meta.get(META_KEY), response.meta.get(USAGE_KEY))
        if not path.startswith(("/from/", "/to/")):
            yield {"url": path}
            yield Request(urljoin(response.url, "/to" + path))
            yield Request(urljoin(response.url, "/from" + path))


NOT_TEXT = ("hex", "rot13", "zlib", "base64", "quopri", "idna", "undefined")


@async_test
async def test_a_charset_that_is_no_text_encoding_is_passed_over(mockserver: MockServer) -> None:
    # As browsers pass over a label they do not know: the page is read in
    # UTF-8, and both middlewares read it, the callback runs. (Scrapy's own
    # MetaRefreshMiddleware reads response.text, which raises on these: off.)
    for label in NOT_TEXT:
        body = (
            '<html><head><meta name="robots" content="noindex">'
            '<meta name="tdm-reservation" content="1"><title>café</title></head>'
            f'<body><a rel="nofollow" href="/to/charset/{label}">x</a></body></html>'
        )
        headers = {"Content-Type": f"text/html; charset={label}", "Content-Usage": "train-ai=n"}
        mockserver.set_page(HOST, f"/charset/{label}", Reply(body=body.encode(), headers=headers))
    urls = [mockserver.url(HOST, f"/charset/{label}") for label in NOT_TEXT]
    settings = {**SETTINGS, "ROBOTRULES_PAGE_NOFOLLOW_LINKS": True, "METAREFRESH_ENABLED": False}
    result = await run_spider(BodyBlindSpider, settings, start_urls=urls)
    assert not result.spider.failures
    assert not [key for key in result.stats if key.startswith("spider_exceptions")]
    for label in NOT_TEXT:
        page, usage = result.spider.seen[f"/charset/{label}"]
        assert page.noindex, label
        assert (usage.state("tdm"), usage.state("train-ai")) == ("disallowed", "disallowed")
        assert mockserver.requests_for(HOST, f"/from/charset/{label}")
        assert not mockserver.requests_for(HOST, f"/to/charset/{label}")
    assert result.stats["robotrules/page/requests/nofollow_link"] == len(NOT_TEXT)
    assert result.stats["robotrules/page/items/marked"] == len(NOT_TEXT)
    assert result.stats["robotrules/usage/tdm/disallowed"] == len(NOT_TEXT)


@async_test
async def test_nofollow_links_are_read_within_the_html_limit(mockserver: MockServer) -> None:
    # Read as the head is: the first ROBOTRULES_PAGE_MAX_HTML bytes. A link
    # past them is not known to be nofollow: a request to it is kept, counted.
    early = '<a rel="nofollow" href="/to/early">'
    late = '<a rel="nofollow" href="/to/late">'
    filler = "<p>" + "text " * 1000 + "</p>"
    pages = {
        "/early": f"<html><body>{early}{filler}</body></html>",
        "/late": f"<html><body>{filler}{late}</body></html>",
    }
    for path, body in pages.items():
        mockserver.set_page(HOST, path, Reply(body=body.encode(), headers=HTML))
    settings = {
        **SETTINGS,
        "ROBOTRULES_PAGE_NOFOLLOW_LINKS": True,
        "ROBOTRULES_PAGE_MAX_HTML": 1000,
    }
    urls = [mockserver.url(HOST, path) for path in pages]
    result = await run_spider(BodyBlindSpider, settings, start_urls=urls)
    assert not mockserver.requests_for(HOST, "/to/early")
    assert mockserver.requests_for(HOST, "/to/late")
    assert result.stats["robotrules/page/requests/nofollow_link"] == 1
    assert result.stats["robotrules/page/links_truncated"] == 2
    said = result.messages("read in its first 1000 bytes only", logging.DEBUG)
    assert len(said) == 2


_DEEP = {
    "/header-deep": Reply(
        body=html(links='<a href="/to/header-deep">a</a>'),
        headers=HTML,
        header_lines=(*(("X-Robots-Tag", "noarchive"),) * 999, ("X-Robots-Tag", "nofollow")),
    ),
    "/meta-deep": Reply(
        body=html(
            *[("robots", "noarchive")] * 300,
            ("robots", "nofollow"),
            links='<a href="/to/meta-deep">a</a>',
        ),
        headers=HTML,
    ),
}
"""A nofollow in the 1,000th X-Robots-Tag header line, and in the 301st robots meta tag."""


@pytest.mark.parametrize(
    ("path", "number"),
    [
        pytest.param("/header-deep", 1000, marks=not_reactorless(MANY_HEADERS)),
        pytest.param("/meta-deep", 301),
    ],
)
@async_test
async def test_a_nofollow_deep_among_header_lines_and_meta_tags_is_obeyed(
    mockserver: MockServer, path: str, number: int
) -> None:
    # Every X-Robots-Tag line the HTTP layer delivers is read, and every robots
    # meta tag within ROBOTRULES_PAGE_MAX_HTML: a nofollow in the 1,000th
    # header line, or in a meta tag past the 300th, keeps the links unfollowed.
    mockserver.set_page(HOST, path, _DEEP[path])
    url = mockserver.url(HOST, path)
    result = await run_spider(PageSpider, SETTINGS, start_urls=[url])
    assert result.crawled == [url]
    assert not followed(mockserver, path)
    assert not mockserver.requests_for(HOST, f"/to{path}")
    page = result.spider.pages[path]
    assert page is not None
    assert page.sources("nofollow")[0].source.number == number
    assert not page.truncated
    stats = result.stats
    assert stats["robotrules/page/requests/nofollow"] == 2
    assert "robotrules/page/truncated" not in stats


def test_nofollow_links_of_a_large_page_cost_the_html_limit() -> None:
    """Memory, not time: the links of a 20 MB page are read in its first bytes only."""
    crawler = get_crawler(settings_dict={**SETTINGS, "ROBOTRULES_PAGE_NOFOLLOW_LINKS": True})
    middleware = PageDirectivesMiddleware(crawler)
    size = 20_000_000
    body = (b'<html><body><a rel="nofollow" href="a">' + b"<p>Some text.</p>" * size)[:size]
    url = "https://site.test/page/"
    response = HtmlResponse(url, body=body, headers=HTML, request=Request(url))
    output = _Output(middleware, response)
    tracemalloc.start()
    try:
        links = output.nofollow_links()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert links == {"https://site.test/page/a"}
    assert peak <= 4 * middleware.config.page_max_html
