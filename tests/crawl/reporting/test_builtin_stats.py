"""Scrapy's own ``robotstxt/*`` stats, as its RobotsTxtMiddleware reports them for the same crawl.

The same crawl runs once with this package and once with Scrapy's built-in
middleware: several sites whose robots.txt answers 200, 404, 503 (after
Scrapy's retries), a redirect, and a network error (a name that does not
resolve), allowed pages, forbidden pages linked again and again (the
built-in meets each once, after the scheduler's duplicate filter) and
forbidden requests with ``dont_filter`` (met every time).

Where the two differ by design, the crawl makes that case explicit:
``ROBOTRULES_UNREACHABLE_TIMEOUT = 0`` so an unreachable robots.txt is
fetched once, as the built-in fetches it, rather than again with back-off.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from scrapy import Request

from tests.helpers.crawling import (
    RecordingSpider,
    async_test,
    download_error,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import BUILTIN, OURS, PRIVATE

CRAWL_TESTS = True

COMPARED: dict[str, Any] = {
    # Scrapy's retries on, as in a real project: both sides retry a 503 and a network error.
    "RETRY_ENABLED": True,
    "RETRY_TIMES": 1,
    # An unreachable robots.txt fetched once, as the built-in fetches it (see the docstring).
    "ROBOTRULES_UNREACHABLE_TIMEOUT": 0,
}


class TwiceForbiddenSpider(RecordingSpider):
    """Also requests a forbidden page twice with ``dont_filter``: both reach the downloader."""

    name = "twice"
    forbidden_url = ""

    async def start(self) -> AsyncIterator[Request]:
        async for request in super().start():
            yield request
        for _ in range(2):
            yield Request(self.forbidden_url, callback=self.parse, dont_filter=True)


def robotstxt_stats(stats: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in stats.items() if key.startswith("robotstxt/")}


def _sites(mockserver: MockServer) -> list[str]:
    mockserver.set_robots("rules.test", Reply(200, PRIVATE))
    # Every page links an allowed page and forbidden ones, some of them again.
    mockserver.set_pages(
        "rules.test", links=["/a", "/private/x", "/private/x", "/private/x#top", "/private/y"]
    )
    mockserver.set_robots("none.test", Reply(404, b"Not Found"))
    mockserver.set_pages("none.test", links=["/a", "/private/x"])
    mockserver.set_robots("busy.test", Reply(503, b"busy"))
    mockserver.set_robots(
        "moved.test", Reply(301, redirect_to=mockserver.url("moved.test", "/rules.txt"))
    )
    mockserver.set_page("moved.test", "/rules.txt", Reply(200, PRIVATE))
    mockserver.set_pages("moved.test", links=["/a", "/private/z", "/private/z"])
    hosts = ("rules.test", "none.test", "busy.test", "moved.test", "gone.invalid")
    return [mockserver.url(host, "/") for host in hosts]


@async_test
async def test_the_same_crawl_reports_the_same_robotstxt_stats(mockserver: MockServer) -> None:
    urls = _sites(mockserver)
    TwiceForbiddenSpider.forbidden_url = mockserver.url("rules.test", "/private/again")
    kwargs: dict[str, Any] = {"start_urls": urls, "follow": True}
    builtin = await run_spider(TwiceForbiddenSpider, {**BUILTIN, **COMPARED}, **kwargs)
    ours = await run_spider(TwiceForbiddenSpider, {**OURS, **COMPARED}, **kwargs)

    expected = robotstxt_stats(builtin.stats)
    # The crawl met every case it is meant to compare.
    assert expected["robotstxt/request_count"] == 5
    assert expected["robotstxt/response_status_count/200"] == 2
    assert expected["robotstxt/response_status_count/404"] == 1
    assert expected["robotstxt/response_status_count/503"] == 1
    assert expected["robotstxt/response_count"] == 4
    # Scrapy keys the error as str(type(error)): 2.14+'s own, 2.13's Twisted one.
    assert [key for key in expected if "exception_count" in key] == [
        f"robotstxt/exception_count/{download_error('CannotResolveHostError')}"
    ]
    # rules.test: /private/x, /private/y and /private/again twice; moved.test: /private/z.
    assert expected["robotstxt/forbidden"] == 5
    assert robotstxt_stats(ours.stats) == expected
    # This package's own count of forbidden requests counts every offer.
    assert ours.stats["robotrules/forbidden"] > expected["robotstxt/forbidden"]


@async_test
async def test_shadow_mode_counts_what_enforce_mode_would_drop(mockserver: MockServer) -> None:
    urls = _sites(mockserver)
    TwiceForbiddenSpider.forbidden_url = mockserver.url("rules.test", "/private/again")
    kwargs: dict[str, Any] = {"start_urls": urls, "follow": True}
    settings = {**OURS, **COMPARED, "ROBOTRULES_MODE": "shadow"}
    shadow = await run_spider(TwiceForbiddenSpider, settings, **kwargs)
    assert shadow.stats["robotstxt/forbidden"] == 5
    assert shadow.stats["robotrules/shadow/would_forbid"] == shadow.stats["robotrules/forbidden"]


@async_test
async def test_a_rule_is_counted_as_a_rule_whatever_its_text_says(mockserver: MockServer) -> None:
    """A drop is counted by what forbade it, never by the words of its reason: a robots.txt
    rule whose path reads like a usage preference's refusal is still robots.txt's rule."""
    mockserver.set_robots(
        "words.test", Reply(200, b"User-agent: *\nDisallow: /usage preferences refuse\n")
    )
    forbidden = mockserver.url("words.test", "/usage%20preferences%20refuse")
    result = await run_spider(RecordingSpider, OURS, start_urls=[forbidden])
    assert result.stats["robotrules/forbidden"] == 1
    assert result.stats["robotstxt/forbidden"] == 1
    assert "robotrules/usage/forbidden" not in result.stats
