"""The stats identity every crawl must keep: each offered request is counted once."""

from __future__ import annotations

from typing import Any

from scrapy import Request

from tests.helpers.crawling import CrawlResult, RecordingSpider
from tests.helpers.variants import stat


def identity_holds(result: CrawlResult[Any]) -> bool:
    """The identity of docs/reference/stats.rst: every offered request ended one way."""
    ended = sum(
        stat(result, key)
        for key in (
            "allowed",
            "forbidden",
            "unreachable",
            "unchecked",
            "lost_at_close",
            "saved_at_close",
        )
    )
    return bool(stat(result, "offered") == ended)


class SavableSpider(RecordingSpider):
    """Requests that can be saved to disk: a spider method as callback, no partial errback."""

    name = "savable"

    def request(self, url: str) -> Request:
        return Request(url, callback=self.parse)
