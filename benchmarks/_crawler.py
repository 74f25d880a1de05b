"""What the crawl benchmarks share: the compared variants' settings and running a worker.

``crawl.py``, ``fleet.py`` and ``cpu_per_page.py`` compare the same three
variants with the same Scrapy settings: ``builtin`` (Scrapy's
``RobotsTxtMiddleware``), ``ours`` (this package's add-on) and
``obey-false`` (``ROBOTSTXT_OBEY=False``). Each crawl runs in a fresh
process (``python <script> --worker ...``) that prints one JSON line last.
"""

from __future__ import annotations

import gc
import json
import os
import re
import resource
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import REPO_ROOT, module_command

VARIANTS = ("builtin", "ours", "obey-false")
ROBOTS_ONLY = "ours-robots"
"""The add-on with its page-level and usage middlewares off: robots.txt alone, as the built-in.

Only the CPU benchmarks offer it (``--variants``), to tell the robots layer's
cost from that of reading each page's own rules and preferences.
"""
ROBOTS_ONLY_MEANS = "robots.txt alone, page-level rules and usage preferences off"
"""How the CPU benchmarks' reports describe :data:`ROBOTS_ONLY` beside its ratio."""
ALL_VARIANTS = (*VARIANTS, ROBOTS_ONLY)
"""What ``cpu_per_page.py`` and ``cpu_instructions.py`` may be asked to crawl."""
COMMON_SETTINGS: dict[str, Any] = {
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    "DOWNLOAD_TIMEOUT": 30,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "TELNETCONSOLE_ENABLED": False,
    "TWISTED_DNS_RESOLVER": "benchmarks.sites.LoopbackResolver",
}
HREF = re.compile(rb'href="([^"]+)"')
"""The links of a page of ``sites.py`` (a spider follows them without parsing HTML)."""


def variant_settings(variant: str) -> dict[str, Any]:
    """The settings of a variant: :data:`COMMON_SETTINGS` plus who obeys robots.txt."""
    settings = dict(COMMON_SETTINGS)
    settings["ROBOTSTXT_OBEY"] = variant != "obey-false"
    if variant in ("ours", ROBOTS_ONLY):
        settings["ADDONS"] = {"scrapy_robotrules.Addon": 0}
    if variant == ROBOTS_ONLY:  # as the docs' guides say to turn each off
        settings["SPIDER_MIDDLEWARES"] = {
            "scrapy_robotrules.PageDirectivesMiddleware": None,
            "scrapy_robotrules.UsagePreferencesMiddleware": None,
        }
    return settings


def max_rss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


def cpu_seconds() -> float:
    """CPU time (user + system) this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class GcClock:
    """CPU time inside the cyclic garbage collector, from :meth:`start` to :meth:`stop`.

    Collections take a fifth to a quarter of a crawl's CPU, and the full
    ones walk every live object of the process, so their cost may move
    between crawls of the same code: timed apart, a run shows whether they
    are what moves.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self.full = 0
        """Collections of the oldest generation."""
        self._began = 0.0

    def start(self) -> None:
        gc.callbacks.append(self._collecting)

    def stop(self) -> None:
        gc.callbacks.remove(self._collecting)

    def _collecting(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.thread_time()
            return
        self.seconds += time.thread_time() - self._began
        self.full += info["generation"] == 2


def connections_accepted(port: int) -> int:
    """How many connections the sites server on ``port`` has accepted, this one included."""
    from benchmarks.sites import CONNECTIONS_PATH

    with urllib.request.urlopen(f"http://127.0.0.1:{port}{CONNECTIONS_PATH}", timeout=30) as reply:
        return int(reply.read())


def run_worker(
    script: str | Path, args: Sequence[str], timeout: float, *, under: Sequence[str] = ()
) -> tuple[dict[str, Any] | None, str]:
    """Run ``script`` as a worker module: (its last stdout line as JSON, or None; why/stderr).

    ``under``: a command that runs it (``valgrind ...``), if any.
    """
    cmd = [*under, *module_command(str(script), "--worker", *args)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT, check=False
        )
    except subprocess.TimeoutExpired:
        return None, f"killed after {timeout:.0f} s"
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        return None, f"exit status {proc.returncode}\n{tail}"
    answer: dict[str, Any] = json.loads(lines[-1])
    return answer, proc.stderr


class Crawl:
    """One crawl in this process, from ``start_urls``, following links if ``follow``.

    Building it installs Scrapy's default reactor (so a server can listen
    before the crawl starts); ``start_urls`` may be filled in until
    :meth:`run`. ``pages`` holds the ``time.time()`` of each page parsed.
    """

    def __init__(self, settings: dict[str, Any], *, follow: bool, name: str = "bench") -> None:
        import scrapy
        from scrapy import signals
        from scrapy.crawler import CrawlerProcess
        from scrapy.http import Response
        from scrapy.settings.default_settings import TWISTED_REACTOR
        from scrapy.utils.reactor import install_reactor

        self.process = CrawlerProcess(settings)
        install_reactor(TWISTED_REACTOR)
        self.start_urls: list[str] = []
        self.pages: list[float] = []
        self.opened: float | None = None
        self.closed: float | None = None
        self.reasons: list[str] = []
        crawl = self

        class BenchSpider(scrapy.Spider):
            async def start(self) -> Any:
                for url in crawl.start_urls:
                    yield scrapy.Request(url)

            def parse(self, response: Response, **kwargs: Any) -> Any:
                crawl.pages.append(time.time())
                if follow:
                    for href in HREF.findall(response.body):
                        yield response.follow(href.decode())

        BenchSpider.name = name
        self.crawler = self.process.create_crawler(BenchSpider)
        self.crawler.signals.connect(self._opened, signal=signals.spider_opened)
        self.crawler.signals.connect(self._closed, signal=signals.spider_closed)

    def _opened(self, spider: object) -> None:
        self.opened = time.time()

    def _closed(self, spider: object, reason: str) -> None:
        self.closed = time.time()
        self.reasons.append(reason)

    def run(self, max_time: float | None = None, capped: Callable[[], object] = dict) -> None:
        """Crawl to the end; past ``max_time`` s print ``capped()`` as JSON and leave at once.

        Held requests may keep a graceful stop waiting for minutes, hence the hard exit.
        """
        from benchmarks.sites import get_reactor

        def cap() -> None:
            print(json.dumps(capped()), flush=True)
            os._exit(0)

        if max_time is not None:
            get_reactor().callLater(max_time, cap)
        self.process.crawl(self.crawler)
        self.process.start()

    def stats(self) -> dict[str, Any]:
        return self.crawler.stats.get_stats() if self.crawler.stats is not None else {}

    def stat(self, key: str) -> int:
        return int(self.stats().get(key, 0))
