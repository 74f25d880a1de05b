"""One real crawl without a Twisted reactor, run as a script in its own process.

Scrapy refuses ``TWISTED_REACTOR_ENABLED = False`` in a process where a
reactor is installed, as every pytest-twisted test process has; so
``tests/crawl/test_reactorless.py`` runs this script once per crawl:
``python -m tests.helpers.reactorless_crawl JOB.json RESULT.json`` from the
repository root. It starts the job's sites, each an aiohttp server on its
own port of 127.0.0.1 (Scrapy's reactorless downloads resolve names
themselves: no resolver to bend, so a site is an origin by its port), and
crawls them with ``AsyncCrawlerRunner`` in an asyncio loop, importing
``twisted.internet.reactor`` forbidden as under ``scrapy crawl``.

The job (JSON): ``sites`` maps a name to ``robots`` (``status``, ``body``,
``hold_until_parked``: answer only once that many requests are parked) and
``pages`` (path to ``status``, ``body``, ``headers``; other paths get an HTML
page linking ``links``); ``start`` lists URLs; ``settings``; ``follow``;
``repeat`` (crawls of the same sites, one after another). In URLs, settings,
robots.txt bodies, pages and links, ``{name}`` stands for a site's
``http://127.0.0.1:port`` (``Sitemap: {a}/sitemap.xml``). The result (JSON):
what the last crawl did (``crawled``, ``failures``, ``items``, ``stats``),
every crawl's in ``runs``, and ``log`` (level, logger, message),
``requests`` (site, path, monotonic time), ``sites`` (name to base URL) and
``reactor_imported``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aiohttp import web
from scrapy import signals
from scrapy.crawler import AsyncCrawlerRunner, Crawler
from scrapy.http import Response
from scrapy.utils.reactorless import install_reactor_import_hook

from scrapy_robotrules.crawl.compat import engine
from scrapy_robotrules.crawl.manager import RobotsManager
from tests.helpers.recording_spider import RecordingSpider

Job = dict[str, Any]


class Site:
    """One site: its robots.txt and pages, and the requests it received."""

    def __init__(self, name: str, config: Job, requests: list[tuple[str, str, float]]) -> None:
        self.name = name
        self.config = config
        self.requests = requests
        self.parked_enough = asyncio.Event()
        self.base = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append((self.name, request.path_qs, time.monotonic()))
        if request.path == "/robots.txt":
            robots = self.config.get("robots", {"status": 404, "body": "Not Found"})
            if robots.get("hold_until_parked"):
                await self.parked_enough.wait()
            body = robots.get("body", "").format(**bases)
            return web.Response(status=robots.get("status", 200), body=body)
        page = self.config.get("pages", {}).get(request.path_qs)
        if page is not None:
            headers = {"Content-Type": "text/html; charset=utf-8", **page.get("headers", {})}
            body = page.get("body", "<html><body>page</body></html>").format(**bases)
            return web.Response(status=page.get("status", 200), body=body, headers=headers)
        links = "".join(
            f'<a href="{link.format(**bases)}">x</a>' for link in self.config.get("links", ())
        )
        body = f"<html><body><h1>{request.path_qs}</h1>{links}</body></html>"
        return web.Response(body=body, content_type="text/html", charset="utf-8")

    async def start(self) -> web.AppRunner:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        self.base = f"http://127.0.0.1:{port}"
        return runner


bases: dict[str, str] = {}
"""Site name to base URL, for ``str.format`` of the job's URLs and settings."""


class JobSpider(RecordingSpider):
    """The tests' recording spider, yielding one item per page, and keeping the items scraped."""

    name = "reactorless"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.items: list[dict[str, Any]] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> JobSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, JobSpider)
        crawler.signals.connect(spider.on_item, signal=signals.item_scraped)
        return spider

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        followed = list(super().parse(response))  # recorded as crawled; links, if followed
        yield {"url": response.url}
        yield from followed

    def on_item(self, item: dict[str, Any]) -> None:
        self.items.append(dict(item))


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[tuple[str, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelname, record.name, record.getMessage()))


def formatted(value: Any) -> Any:
    if isinstance(value, str):
        return value.format(**bases)
    if isinstance(value, list):
        return [formatted(each) for each in value]
    if isinstance(value, dict):
        return {key: formatted(each) for key, each in value.items()}
    return value


async def release_when_parked(crawler: Crawler, sites: list[Site]) -> None:
    """Answer each held robots.txt once the job's count of requests is parked."""
    while True:
        parked = len(RobotsManager.for_crawler(crawler).parking) if engine(crawler) else 0
        for site in sites:
            if parked >= site.config["robots"]["hold_until_parked"]:
                site.parked_enough.set()
        await asyncio.sleep(0.01)


async def crawl(job: Job) -> dict[str, Any]:
    """Start the sites, crawl them (``repeat`` times, one after the other), stop them.

    What the last crawl did, with every crawl's own in ``runs``.
    """
    requests: list[tuple[str, str, float]] = []
    sites = [Site(name, config, requests) for name, config in job["sites"].items()]
    runners = [await site.start() for site in sites]
    bases.update((site.name, site.base) for site in sites)
    runs: list[dict[str, Any]] = []
    try:
        for _ in range(job.get("repeat", 1)):
            runs.append(await crawl_once(job, sites))
    finally:
        for site_runner in runners:
            await site_runner.cleanup()
    return {**runs[-1], "runs": runs, "requests": requests, "sites": bases}


async def crawl_once(job: Job, sites: list[Site]) -> dict[str, Any]:
    settings = {
        "TWISTED_REACTOR_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "HTTPPROXY_ENABLED": False,
        **formatted(job.get("settings", {})),
    }
    runner = AsyncCrawlerRunner(settings)
    crawler = runner.create_crawler(JobSpider)
    held = [site for site in sites if site.config.get("robots", {}).get("hold_until_parked")]
    watcher = asyncio.ensure_future(release_when_parked(crawler, held)) if held else None
    try:
        await runner.crawl(
            crawler, start_urls=formatted(job["start"]), follow=bool(job.get("follow"))
        )
    finally:
        if watcher is not None:
            watcher.cancel()
    spider = crawler.spider
    assert isinstance(spider, JobSpider)
    assert crawler.stats is not None
    return {
        "crawled": spider.crawled,
        "failures": [(url, type(error).__name__) for url, error in spider.failures],
        "items": spider.items,
        "stats": {key: _plain(value) for key, value in crawler.stats.get_stats().items()},
    }


def _plain(value: object) -> object:
    return value if isinstance(value, (int, float, str)) else str(value)


def main(job_path: str, result_path: str) -> None:
    job: Job = json.loads(Path(job_path).read_text("utf-8"))
    records = Records()
    root = logging.getLogger()
    root.addHandler(records)
    root.setLevel(logging.DEBUG)
    shown = logging.StreamHandler()  # the crawl's log, for pytest to show on a failure
    shown.setLevel(logging.INFO)
    root.addHandler(shown)
    install_reactor_import_hook()  # as AsyncCrawlerProcess (``scrapy crawl``) does
    result = asyncio.run(crawl(job))
    result["log"] = records.lines
    result["reactor_imported"] = "twisted.internet.reactor" in sys.modules
    Path(result_path).write_text(json.dumps(result), "utf-8")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
