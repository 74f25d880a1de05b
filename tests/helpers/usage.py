"""Sites and a spider for the usage-preference crawl tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Response

from scrapy_robotrules.crawl.pages.usage import META_KEY
from scrapy_robotrules.engine.usage.preferences import UsageView
from tests.helpers.crawling import (
    RecordingSpider,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
)

AGENT = "ExampleBot/1.0 (+https://example.test/bot)"


HTML = {"Content-Type": "text/html; charset=utf-8"}


SETTINGS = {"ADDONS": {"scrapy_robotrules.Addon": 0}, "ROBOTSTXT_OBEY": True, "USER_AGENT": AGENT}


def html(*metas: tuple[str, str]) -> bytes:
    tags = "".join(f'<meta name="{name}" content="{content}">' for name, content in metas)
    return f"<html><head>{tags}</head><body>x</body></html>".encode()


class UsageSpider(RecordingSpider):
    """Yields one item per page and records each response's usage view."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.items: list[dict[str, Any]] = []
        self.views: dict[str, UsageView] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> UsageSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, UsageSpider)
        crawler.signals.connect(spider.on_item, signal=signals.item_scraped)
        return spider

    def on_item(self, item: dict[str, Any]) -> None:
        self.items.append(item)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        self.crawled.append(response.url)
        path = urlsplit(response.url).path
        self.views[path] = response.meta[META_KEY]
        yield {"url": path}
