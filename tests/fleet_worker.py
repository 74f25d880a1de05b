"""One crawler of a fleet, as its own process: ``python fleet_worker.py SETTINGS_JSON OUTPUT``.

Crawls the start URLs in ``SETTINGS_JSON`` (following links) with the
package enabled and the settings given, every host name resolved to the
test server, and writes what happened to ``OUTPUT`` as JSON: the URLs
crawled, the URLs robots.txt forbade (with the reason), the crawl's stats.
Several of these run at once in the fleet tests and the fleet benchmark.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response, TextResponse
from twisted.python.failure import Failure

from scrapy_robotrules.manager import RobotsTxtForbidden


class FleetSpider(Spider):
    name = "fleet"

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = start_urls
        self.crawled: list[str] = []
        self.forbidden: dict[str, str] = {}
        self.failed: dict[str, str] = {}

    def request(self, url: str) -> Request:
        return Request(url, callback=self.parse, errback=partial(self.on_failure, url))

    async def start(self) -> AsyncIterator[Request]:
        for url in self.start_urls:
            yield self.request(url)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.crawled.append(response.url)
        if isinstance(response, TextResponse):
            for href in response.css("a::attr(href)").getall():
                yield self.request(response.urljoin(href))

    def on_failure(self, url: str, failure: Failure) -> None:
        if isinstance(failure.value, RobotsTxtForbidden):
            self.forbidden[url] = failure.value.reason
        else:
            self.failed[url] = repr(failure.value)


def main(settings_file: str, output: str) -> None:
    config = json.loads(Path(settings_file).read_text())
    settings = {
        "ADDONS": {"scrapy_robotrules.Addon": 0},
        "ROBOTSTXT_OBEY": True,
        "DNS_RESOLVER": "mockserver.LoopbackResolver",
        "TELNETCONSOLE_ENABLED": False,
        "HTTPPROXY_ENABLED": False,
        "LOG_LEVEL": "INFO",
        **config["settings"],
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(FleetSpider)
    process.crawl(crawler, start_urls=config["start_urls"])
    process.start()
    spider = crawler.spider
    assert isinstance(spider, FleetSpider)
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float))}
    result = {
        "crawled": spider.crawled,
        "forbidden": spider.forbidden,
        "failed": spider.failed,
        "stats": stats,
    }
    Path(output).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
