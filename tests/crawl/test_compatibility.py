"""Where Scrapy's own robots.txt handling sets the expectation: agents, the parser interface.

- Scrapy's ``RobotsTxtMiddleware`` asks robots.txt about ``ROBOTSTXT_USER_AGENT``,
  else the request's own ``User-Agent`` header; so does this package when no
  agent is named for robots.txt.
- Scrapy's parser interface: ``from_crawler(None, body)`` is how Scrapy's own
  tests (``tests/test_robotstxt_interface.py``) build parsers.
"""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any, cast

import pytest
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.utils.misc import build_from_crawler

from scrapy_robotrules import RobotParser
from scrapy_robotrules.crawl.fetching.bodies import decode_body, file_start
from tests.helpers.crawling import RecordingSpider, async_test, run_spider
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.slots import SLOT_LOG, assert_released_apart, pages_released
from tests.helpers.variants import BUILTIN, OURS, paths, stat

CRAWL_TESTS = True

AGENTS = b"User-agent: otherbot\nDisallow: /private\n\nUser-agent: *\nDisallow: /secret\n"


class HeaderSpider(RecordingSpider):
    """Requests each ``(url, agent)`` of ``plan``, with that ``User-Agent`` header if not None.

    They are sent from the callback of ``start_urls``, once robots.txt is
    at hand: Scrapy's middleware lets the requests that waited for its
    robots.txt (but the first) through unchecked.
    """

    name = "headers"

    def __init__(self, plan: Sequence[tuple[str, str | None]] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = list(plan)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.crawled.append(response.url)
        plan, self.plan = self.plan, []
        for url, agent in plan:
            headers = {"User-Agent": agent} if agent is not None else {}
            yield Request(
                url, headers=headers, callback=self.parse, errback=partial(self.on_failure, url)
            )


def _plan(mockserver: MockServer) -> list[tuple[str, str | None]]:
    url = partial(mockserver.url, "agents.test")
    return [
        (url("/private/1"), "OtherBot/2.0 (+https://other.example)"),
        (url("/secret/1"), "OtherBot/2.0 (+https://other.example)"),
        (url("/private/2"), None),
        (url("/secret/2"), None),
    ]


@pytest.mark.parametrize("middleware", ["ours", "scrapy"])
@async_test
async def test_a_requests_own_user_agent_is_matched_as_scrapy_does(
    mockserver: MockServer, middleware: str
) -> None:
    mockserver.set_robots("agents.test", Reply(body=AGENTS))
    settings = OURS if middleware == "ours" else BUILTIN
    result = await run_spider(
        HeaderSpider, settings, plan=_plan(mockserver), start_urls=[mockserver.url("agents.test")]
    )
    # OtherBot's group for its requests, the * group for the others (USER_AGENT: Scrapy/...).
    assert paths(result, result.crawled) == ["", "private/2", "secret/1"]
    assert paths(result, result.ignored) == ["private/1", "secret/2"]


@pytest.mark.parametrize(
    "named",
    [
        {"ROBOTRULES_USER_AGENT": "MyBot/1.0"},
        {"ROBOTSTXT_USER_AGENT": "MyBot/1.0"},
    ],
)
@async_test
async def test_an_agent_named_for_robots_txt_wins_over_the_requests_own(
    mockserver: MockServer, named: dict[str, str]
) -> None:
    mockserver.set_robots("agents.test", Reply(body=AGENTS))
    plan = _plan(mockserver)
    result = await run_spider(
        HeaderSpider, {**OURS, **named}, plan=plan, start_urls=[mockserver.url("agents.test")]
    )
    assert paths(result, result.crawled) == ["", "private/1", "private/2"]
    assert paths(result, result.ignored) == ["secret/1", "secret/2"]


@async_test
async def test_crawl_delay_follows_the_requests_own_agent(mockserver: MockServer) -> None:
    # The Allow line ends slowbot's group (SPEC 2): a User-agent line after
    # Crawl-delay alone would join it.
    robots = b"User-agent: slowbot\nCrawl-delay: 0.5\nAllow: /\n\nUser-agent: *\nAllow: /\n"
    mockserver.set_robots("slow.test", Reply(body=robots))
    mockserver.set_robots("fast.test", Reply(body=robots))
    slow = [(mockserver.url("slow.test", f"/{n}"), "SlowBot/1.0") for n in range(3)]
    fast = [(mockserver.url("fast.test", f"/{n}"), None) for n in range(3)]
    settings = {**OURS, "DOWNLOAD_DELAY_JITTER": 0, **SLOT_LOG}
    start = [mockserver.url("start.test")]
    result = await run_spider(HeaderSpider, settings, plan=slow + fast, start_urls=start)
    assert len(result.crawled) == 7
    assert_released_apart(pages_released(result.crawler, "slow.test"), 0.5)
    # Scrapy/... is no slowbot: no delay on its slot.
    assert {page.delay for page in pages_released(result.crawler, "fast.test")} == {0.0}


class GoodBotSpider(RecordingSpider):
    name = "goodbot"
    robotrules_user_agent = "GoodBot/2.0"


@async_test
async def test_scrapys_middleware_with_our_parser_honours_robotrules_user_agent(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("site.test", Reply(body=b"User-agent: goodbot\nDisallow: /private\n"))
    urls = [mockserver.url("site.test", p) for p in ("/public", "/private")]
    settings = {**BUILTIN, "ROBOTSTXT_PARSER": "scrapy_robotrules.RobotParser"}
    result = await run_spider(GoodBotSpider, settings, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]


# Scrapy's parser interface tests (tests/test_robotstxt_interface.py of Scrapy
# 2.19), run against this parser: the same bodies, the same answers. Scrapy
# skips order_based_precedence for the most-specific parsers (Protego): so
# does this one, by default.

NO_CRAWLER = cast("Crawler", None)


def _parse(body: bytes) -> RobotParser:
    return build_from_crawler(RobotParser, NO_CRAWLER, body)


def test_from_crawler_without_a_crawler_uses_the_defaults() -> None:
    parser = RobotParser.from_crawler(None, b"User-agent: *\nDisallow: /\nAllow: /page\n")
    assert parser.precedence == "most-specific"
    assert parser.agent_match == "token"
    assert parser.user_agent is None
    assert parser.allowed("https://www.site.local/page", "*")


def test_scrapy_interface_allowed() -> None:
    rp = _parse(b"User-agent: * \nDisallow: /disallowed \nAllow: /allowed \nCrawl-delay: 10")
    assert rp.allowed("https://www.site.local/allowed", "*")
    assert not rp.allowed("https://www.site.local/disallowed", "*")


def test_scrapy_interface_allowed_wildcards() -> None:
    rp = _parse(
        b"""User-agent: first
                                Disallow: /disallowed/*/end$

                                User-agent: second
                                Allow: /*allowed
                                Disallow: /
                                """
    )
    assert rp.allowed("https://www.site.local/disallowed", "first")
    assert not rp.allowed("https://www.site.local/disallowed/xyz/end", "first")
    assert not rp.allowed("https://www.site.local/disallowed/abc/end", "first")
    assert rp.allowed("https://www.site.local/disallowed/xyz/endinglater", "first")
    assert rp.allowed("https://www.site.local/allowed", "second")
    assert rp.allowed("https://www.site.local/is_still_allowed", "second")
    assert rp.allowed("https://www.site.local/is_allowed_too", "second")


def test_scrapy_interface_length_based_precedence() -> None:
    rp = _parse(b"User-agent: * \nDisallow: / \nAllow: /page")
    assert rp.allowed("https://www.site.local/page", "*")


def test_scrapy_interface_empty_and_garbage_responses_allow_all() -> None:
    for body in (b"", b"GIF89a\xd3\x00\xfe\x00\xa2"):
        rp = _parse(body)
        assert rp.allowed("https://site.local/", "*")
        assert rp.allowed("https://site.local/", "chrome")
        assert rp.allowed("https://site.local/index.html", "*")
        assert rp.allowed("https://site.local/disallowed", "*")


def test_scrapy_interface_crawl_delay() -> None:
    assert _parse(b"User-agent: *\nDisallow: /private\nCrawl-delay: 10\n").crawl_delay("*") == 10.0
    assert _parse(b"User-agent: *\nDisallow: /private\n").crawl_delay("*") is None


def test_scrapy_interface_unicode_url_and_useragent() -> None:
    rp = _parse(
        """
        User-Agent: *
        Disallow: /admin/
        Disallow: /static/
        # taken from https://en.wikipedia.org/robots.txt
        Disallow: /wiki/K%C3%A4ytt%C3%A4j%C3%A4:
        Disallow: /wiki/Käyttäjä:

        User-Agent: UnicödeBöt
        Disallow: /some/randome/page.html""".encode()
    )
    assert rp.allowed("https://site.local/", "*")
    assert not rp.allowed("https://site.local/admin/", "*")
    assert not rp.allowed("https://site.local/static/", "*")
    assert rp.allowed("https://site.local/admin/", "UnicödeBöt")
    assert not rp.allowed("https://site.local/wiki/K%C3%A4ytt%C3%A4j%C3%A4:", "*")
    assert not rp.allowed("https://site.local/wiki/Käyttäjä:", "*")
    assert rp.allowed("https://site.local/some/randome/page.html", "*")
    assert not rp.allowed("https://site.local/some/randome/page.html", "UnicödeBöt")


# A compressed robots.txt: unpacked only as far as it is read (RFC 9309 §2.5).

BOMB_RULES = b"User-agent: *\nDisallow: /private\n"


@async_test
async def test_a_gzip_bomb_robots_txt_is_read_as_far_as_max_size_in_bounded_memory(
    mockserver: MockServer,
) -> None:
    # A 20 MB comment after the rules, 20 KB on the wire: four times what
    # Scrapy would unpack (ten times ROBOTRULES_MAX_SIZE) before refusing it.
    bomb = gzip.compress(BOMB_RULES + b"#" * 20_000_000, compresslevel=9)
    assert len(bomb) < 100_000
    mockserver.set_robots("bomb.test", Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
    urls = [mockserver.url("bomb.test", p) for p in ("/public", "/private")]
    # A first crawl imports what crawls import, so that the traced one measures the crawl.
    await run_spider(RecordingSpider, OURS, start_urls=[mockserver.url("warm.test")])
    tracemalloc.start()
    try:
        result = await run_spider(RecordingSpider, OURS, start_urls=urls)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]
    assert stat(result, "truncated") == 1
    assert stat(result, "origins/unreachable") == 0
    # Unpacked as far as it is read: not 20 MB, nor the 5 MB where Scrapy would stop.
    assert peak < 5_000_000, peak
    [line] = result.messages("larger than ROBOTRULES_MAX_SIZE")
    assert "(more than 512000 bytes)" in line


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw-deflate", "gzip-members"])
@async_test
async def test_every_zlib_coding_is_unpacked(mockserver: MockServer, coding: str) -> None:
    if coding == "gzip":
        body = gzip.compress(BOMB_RULES)
    elif coding == "gzip-members":
        body = gzip.compress(BOMB_RULES[:20]) + gzip.compress(BOMB_RULES[20:])
    elif coding == "deflate":
        body = zlib.compress(BOMB_RULES)
    else:
        packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body = packer.compress(BOMB_RULES) + packer.flush()
    header = "deflate" if "deflate" in coding else "gzip"
    mockserver.set_robots("zipped.test", Reply(body=body, headers={"Content-Encoding": header}))
    urls = [mockserver.url("zipped.test", p) for p in ("/public", "/private")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]
    assert stat(result, "truncated") == 0


@async_test
async def test_a_broken_gzip_robots_txt_is_unreachable_not_allow_all(
    mockserver: MockServer,
) -> None:
    broken = gzip.compress(BOMB_RULES)[:-12]  # cut inside the stream
    mockserver.set_robots("broken.test", Reply(body=broken, headers={"Content-Encoding": "gzip"}))
    urls = [mockserver.url("broken.test", "/private")]
    settings = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.5}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == []
    assert stat(result, "origins/unreachable") == 1
    assert result.messages("cannot be unpacked")


def test_decode_body_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"x" * 10_000_000)
    assert decode_body(bomb, [b"gzip"], 1001) == b"x" * 1001
    twice = gzip.compress(gzip.compress(b"y" * 100_000))
    assert decode_body(twice, [b"gzip", b"gzip"], 50) == b"y" * 50
    with pytest.raises(ValueError, match="br"):
        decode_body(b"", [b"br"], 10)


def test_a_stream_cut_by_a_stopped_download_ends_at_its_last_line_break() -> None:
    # Stored (level 0), the stream unpacks to fewer bytes than arrived: a
    # download stopped at the limit leaves the start of a larger file, whose
    # last line, cut, is dropped, as the limit drops one (SPEC 1).
    text = b"User-agent: *\nDisallow: /a\nDisallow: /abcdef\n"
    cut = gzip.compress(text, compresslevel=0)[: -8 - 3]  # the trailer, and "ef\n"
    assert decode_body(cut, [b"gzip"], 1_000, cut=True) == text[:-3]
    assert file_start(cut, [b"gzip"], 1_000, stopped=True) == (text[:27], True)
    with pytest.raises(zlib.error, match="ends early"):
        file_start(cut, [b"gzip"], 1_000, stopped=False)
    # Not cut short: the first ROBOTRULES_MAX_SIZE bytes, the BOM and one more.
    whole = b"\xef\xbb\xbf" + b"x" * 2_000
    assert file_start(whole, [], 1_000, stopped=True) == (whole[:1_004], False)
