"""Sitemaps from the same robots.txt fetch in real crawls; the server counts requests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from scrapy import Request
from scrapy.exceptions import ScrapyDeprecationWarning
from scrapy.http import Response
from scrapy.spiders import SitemapSpider
from scrapy.utils.test import get_crawler

from scrapy_robotrules.crawl.config.settings import RobotRulesSettingError
from scrapy_robotrules.crawl.middleware import RobotRulesMiddleware
from tests.helpers.crawling import RecordingSpider, async_test, run_spider, with_custom_settings
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import OURS, stat

CRAWL_TESTS = True

XML = {"Content-Type": "application/xml"}


def _urlset(*urls: str) -> bytes:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
    ).encode()


def _site(server: MockServer, host: str, robots: str = "") -> None:
    server.set_robots(
        host,
        Reply(
            body=f"User-agent: *\n{robots}Sitemap: {server.url(host, '/sitemap.xml')}\n".encode()
        ),
    )
    server.set_page(
        host, "/sitemap.xml", Reply(body=_urlset(server.url(host, "/page")), headers=XML)
    )


class RecordingSitemapSpider(SitemapSpider, RecordingSpider):
    """A SitemapSpider that records the pages it reached."""

    name = "sitemaps"

    def __init__(self, sitemap_urls: list[str], **kwargs: Any) -> None:
        self.sitemap_urls = sitemap_urls
        super().__init__(**kwargs)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.crawled.append(response.url)
        return iter(())


@async_test
async def test_a_sitemap_spider_on_robots_txt_makes_one_robots_request_per_origin(
    mockserver: MockServer,
) -> None:
    hosts = ("a.test", "b.test")
    for host in hosts:
        _site(mockserver, host)
    result = await run_spider(
        RecordingSitemapSpider,
        OURS,
        sitemap_urls=[mockserver.url(h, "/robots.txt") for h in hosts],
    )
    assert sorted(result.crawled) == sorted(mockserver.url(h, "/page") for h in hosts)
    for host in hosts:
        assert len(mockserver.requests_for(host, "/robots.txt")) == 1
    assert stat(result, "sitemaps/answered") == 2


@async_test
async def test_schedule_sitemaps_schedules_every_new_origins_sitemaps(
    mockserver: MockServer,
) -> None:
    _site(mockserver, "a.test")
    _site(mockserver, "b.test", robots="Disallow: /page\n")
    result = await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_SCHEDULE_SITEMAPS": True},
        start_urls=[mockserver.url(h, "/") for h in ("a.test", "b.test")],
    )
    # The sitemaps' pages reach the spider's parse, robots.txt still deciding them.
    assert mockserver.url("a.test", "/page") in result.crawled
    assert mockserver.url("b.test", "/page") not in result.crawled
    assert stat(result, "forbidden") == 1
    assert stat(result, "sitemaps/scheduled") == 2
    for host in ("a.test", "b.test"):
        assert len(mockserver.requests_for(host, "/robots.txt")) == 1
        assert len(mockserver.requests_for(host, "/sitemap.xml")) == 1


@async_test
async def test_sitemap_follow_chooses_which_sitemaps(mockserver: MockServer) -> None:
    _site(mockserver, "a.test")
    _site(mockserver, "b.test")
    result = await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_SCHEDULE_SITEMAPS": True, "ROBOTRULES_SITEMAP_FOLLOW": [r"//a\."]},
        start_urls=[mockserver.url(h, "/") for h in ("a.test", "b.test")],
    )
    assert mockserver.url("a.test", "/page") in result.crawled
    assert mockserver.requests_for("b.test", "/sitemap.xml") == []
    assert stat(result, "sitemaps/scheduled") == 1


@async_test
async def test_the_old_name_follow_sitemaps_still_schedules_them_with_one_warning(
    mockserver: MockServer,
) -> None:
    _site(mockserver, "a.test")
    with pytest.warns(ScrapyDeprecationWarning) as caught:
        result = await run_spider(
            RecordingSpider,
            {**OURS, "ROBOTRULES_FOLLOW_SITEMAPS": True},
            start_urls=[mockserver.url("a.test", "/")],
        )
    assert mockserver.url("a.test", "/page") in result.crawled
    assert stat(result, "sitemaps/scheduled") == 1
    ours = [str(w.message) for w in caught if "ROBOTRULES_" in str(w.message)]
    assert ours == [
        "The ROBOTRULES_FOLLOW_SITEMAPS setting is deprecated,"
        " use ROBOTRULES_SCHEDULE_SITEMAPS instead"
    ]
    assert result.messages("not read by scrapy-robotrules") == []


@async_test
async def test_the_new_name_wins_over_the_old_one(mockserver: MockServer) -> None:
    _site(mockserver, "a.test")
    settings = {**OURS, "ROBOTRULES_FOLLOW_SITEMAPS": True, "ROBOTRULES_SCHEDULE_SITEMAPS": False}
    with pytest.warns(ScrapyDeprecationWarning, match="both are set"):
        result = await run_spider(
            RecordingSpider, settings, start_urls=[mockserver.url("a.test", "/")]
        )
    assert result.crawled == [mockserver.url("a.test", "/")]
    assert mockserver.requests_for("a.test", "/sitemap.xml") == []


@async_test
async def test_sitemaps_are_not_followed_by_default(mockserver: MockServer) -> None:
    _site(mockserver, "a.test")
    result = await run_spider(RecordingSpider, OURS, start_urls=[mockserver.url("a.test", "/")])
    assert result.crawled == [mockserver.url("a.test", "/")]
    assert mockserver.requests_for("a.test", "/sitemap.xml") == []


def test_a_bad_sitemap_follow_stops_the_crawl() -> None:
    spider = with_custom_settings({"ROBOTRULES_SITEMAP_FOLLOW": ["("]}, RecordingSpider)
    with pytest.raises(RobotRulesSettingError, match="ROBOTRULES_SITEMAP_FOLLOW must be a list"):
        RobotRulesMiddleware(get_crawler(spider, OURS))
