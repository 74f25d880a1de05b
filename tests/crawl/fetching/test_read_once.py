"""Each response's head is read once for the page and usage middlewares; silence costs nothing.

Most pages carry no robots rule and state no usage preference. Their rules
(``response.meta["robotrules_page"]``) and usage view
(``response.meta["robotrules_usage"]``) are what parsing nothing gives, without
parsing; a page that says something is read as before.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.http import HtmlResponse, Response

import scrapy_robotrules.crawl.pages.directive_middleware
import scrapy_robotrules.crawl.pages.head
import scrapy_robotrules.crawl.pages.usage
from scrapy_robotrules.crawl.pages.head import response_html, response_metas
from scrapy_robotrules.engine.page.directives import parse_page_directives
from scrapy_robotrules.engine.page.html import head_metas
from scrapy_robotrules.engine.usage.preferences import usage_view
from tests.helpers.crawling import RecordingSpider, async_test, run_spider
from tests.helpers.mockserver import MockServer, Reply

CRAWL_TESTS = True

HOST = "site.test"
SETTINGS = {"ADDONS": {"scrapy_robotrules.Addon": 0}, "ROBOTSTXT_OBEY": True, "USER_AGENT": "Bot"}
HTML = {"Content-Type": "text/html; charset=utf-8"}
SILENT = b"<html><body><a href='/x'>x</a></body></html>"
PAGES = {
    "/silent-1": Reply(body=SILENT, headers=HTML),
    "/silent-2": Reply(body=SILENT, headers=HTML),
    "/text": Reply(body=b"plain", headers={"Content-Type": "text/plain"}),
    "/noindex": Reply(body=SILENT, headers={**HTML, "X-Robots-Tag": "noindex"}),
    "/usage": Reply(body=SILENT, headers={**HTML, "Content-Usage": "train-ai=n"}),
    "/signal": Reply(body=SILENT, headers={**HTML, "Content-Signal": "ai-train=no"}),
    "/tdm": Reply(body=SILENT, headers={**HTML, "tdm-reservation": "1"}),
    "/metas": Reply(
        body=b'<html><head><meta name="robots" content="nofollow">'
        b'<meta name="tdm-reservation" content="1"></head></html>',
        headers=HTML,
    ),
}


class MetaSpider(RecordingSpider):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: dict[str, tuple[Any, Any]] = {}

    def parse(self, response: Response, **kwargs: Any) -> Any:
        self.crawled.append(response.url)
        path = response.url.rsplit("/", 1)[1]
        self.seen["/" + path] = (
            response.meta["robotrules_page"],
            response.meta["robotrules_usage"],
        )
        return ()


@async_test
async def test_heads_are_read_once_and_silent_pages_are_not_parsed(
    mockserver: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: Counter[str] = Counter()

    def counted(module: Any, name: str) -> None:
        real = getattr(module, name)

        def count(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, count)

    counted(scrapy_robotrules.crawl.pages.head, "head_metas")
    counted(scrapy_robotrules.crawl.pages.directive_middleware, "parse_page_directives")
    counted(scrapy_robotrules.crawl.pages.usage, "usage_view")
    for path, reply in PAGES.items():
        mockserver.set_page(HOST, path, reply)
    urls = [mockserver.url(HOST, path) for path in PAGES]
    result = await run_spider(MetaSpider, SETTINGS, start_urls=urls)
    assert sorted(result.spider.seen) == sorted(PAGES)
    # One head read, once for both middlewares: the only one whose bytes hold a "<meta"
    # (not the text/plain page; the other HTML pages are not even decoded).
    assert calls["head_metas"] == 1
    # Parsed: the pages that say something (and the middleware's one "nothing" made at start).
    assert calls["parse_page_directives"] == 1 + 2  # /noindex, /metas
    # /usage, /signal, /tdm, /metas (an X-Robots-Tag states no usage)
    assert calls["usage_view"] == 4
    for path in ("/silent-1", "/silent-2", "/text"):
        page, usage = result.spider.seen[path]
        assert page == parse_page_directives((), (), "Bot")
        assert usage == usage_view(mockserver.url(HOST, path))
        assert not page.applied
        assert not usage.statements
    page, usage = result.spider.seen["/metas"]
    assert page.nofollow
    assert usage.state("tdm") == "disallowed"
    assert result.spider.seen["/noindex"][0].noindex
    assert result.spider.seen["/usage"][1].state("train-ai") == "disallowed"
    assert result.spider.seen["/signal"][1].state("train-ai") == "disallowed"
    assert result.spider.seen["/tdm"][1].state("tdm") == "disallowed"
    assert result.stats["robotrules/page/responses"] == 2


_PIECES = st.sampled_from(
    [
        "<html>",
        "<head>",
        "</head>",
        "<body>",
        "<title>t</title>",
        "<!-- <meta x> -->",
        '<meta name="robots" content="noindex">',
        '<META NAME=robots CONTENT="nofollow">',
        "<mEtA name='tdm-reservation' content='1'>",
        "<meta charset=utf-8>",
        "<metadata>",
        "<script><meta name=a content=b></script>",
        "<me",
        "ta>",
        "é",
        "\x00",
        "text",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_PIECES, max_size=12).map("".join),
    st.sampled_from(["utf-8", "utf-16", "utf-16-le", "latin-1"]),
    st.sampled_from([None, "utf-8", "utf-16"]),
    st.integers(min_value=1, max_value=400),
)
def test_a_body_without_meta_bytes_is_not_decoded_and_answers_as_read(
    text: str, encoding: str, declared: str | None, limit: int
) -> None:
    """What the search before decoding answers is what reading the whole head answers."""
    body = text.encode(encoding, "replace")
    headers = {"Content-Type": f"text/html; charset={declared}"} if declared else {}
    response = HtmlResponse("http://site.test/", body=body, headers=headers)
    head, _ = response_html(response, limit)
    assert response_metas(response, limit) == tuple(head_metas(head, limit=limit))
