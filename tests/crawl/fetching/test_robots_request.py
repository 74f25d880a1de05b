"""The robots.txt request: a URL Scrapy's escaping would keep as it is goes verbatim."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler
from w3lib.url import safe_url_string

from scrapy_robotrules.crawl.config.settings import crawl_config
from scrapy_robotrules.crawl.fetching.download import Downloader
from scrapy_robotrules.crawl.reporting.reporter import Reporter

PLAIN = [
    "http://site.test/robots.txt",
    "https://www.a-b.example:8443/robots.txt",
    "http://127.0.0.1:59999/robots.txt",
    "http://xn--bcher-kva.example/robots.txt",
]
OTHERS = [
    "http://Site.test/robots.txt",
    "http://[::1]:8080/robots.txt",
    "http://a_b.test/robots.txt",
    "http://site.test:65535/robots.txt",
    "http://site.test/robots.txt?x=1",
    "http://site.test/a%20b/robots.txt",
]


@pytest.mark.parametrize("url", PLAIN + OTHERS)
def test_a_robots_url_is_verbatim_only_where_escaping_would_keep_it(url: str) -> None:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    downloader = Downloader(crawler, crawl_config(crawler), Reporter(crawler))
    request = downloader.request(url, Request("http://site.test/page"))
    assert request.meta.get("verbatim_url", False) is (url in PLAIN)
    # The URL sent is the one Scrapy would have made of it.
    assert request.url == safe_url_string(url)
