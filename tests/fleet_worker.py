"""One crawler of a fleet, as its own process: ``python fleet_worker.py SETTINGS_JSON OUTPUT``.

Crawls the start URLs in ``SETTINGS_JSON`` (following links) with the
package enabled and the settings given, every host name resolved to the
test server, and writes what happened to ``OUTPUT`` as JSON: the URLs
crawled, the URLs robots.txt forbade (with the reason), the crawl's stats.
Several of these run at once in the fleet tests. Each fetch lease it finds
taken is written, as it happens, to ``OUTPUT`` with the suffix ``.waiting``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from crawling import RecordingSpider
from scrapy import signals
from scrapy.crawler import Crawler, CrawlerProcess

from scrapy_robotrules.manager import RobotsManager, RobotsTxtForbidden


class FleetSpider(RecordingSpider):
    """Follows every link, as each crawler of the fleet does."""

    name = "fleet"

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(start_urls, follow=True, **kwargs)


def report_lease_waits(crawler: Crawler, path: Path) -> None:
    """Append to ``path`` the origin of each fetch lease this crawler finds taken, at once.

    The test reads it to know that a crawler waits on another's fetch: the
    only sign of it outside this process (a refused lease leaves no trace in
    the store).
    """
    fleet = RobotsManager.for_crawler(crawler).fleet
    if fleet is None:
        return
    lease = fleet.lease

    def reporting_lease(origin: str, owner: str, seconds: float) -> bool | None:
        taken = lease(origin, owner, seconds)
        if taken is False:
            with path.open("a") as log:
                log.write(origin + "\n")
        return taken

    fleet.lease = reporting_lease  # type: ignore[method-assign]


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
    waits = Path(output).with_suffix(".waiting")
    crawler.signals.connect(
        lambda: report_lease_waits(crawler, waits), signal=signals.spider_opened, weak=False
    )
    process.crawl(crawler, start_urls=config["start_urls"])
    process.start()
    spider = crawler.spider
    assert isinstance(spider, FleetSpider)
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float))}
    failures = spider.failures
    result = {
        "crawled": spider.crawled,
        "forbidden": {u: e.reason for u, e in failures if isinstance(e, RobotsTxtForbidden)},
        "failed": {u: repr(e) for u, e in failures if not isinstance(e, RobotsTxtForbidden)},
        "stats": stats,
    }
    Path(output).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
