"""Probes of the trust issue: many requests on one slow robots.txt, a stop, Crawl-delay gaps.

Usage::

    python -m benchmarks.waiting [--probes overflow,stop,delay] [--json PATH]

Each probe crawls local sites (``sites.HostServer`` on 127.0.0.1 in the
crawler's process, every host name resolved to it) in a fresh process per
variant: ``builtin`` (Scrapy's ``RobotsTxtMiddleware``), ``ours`` (the
add-on) and, where it means something, ``obey-false``. Figures are compared within one run only.

- ``overflow``: 1,100 requests wait for ``slow.bench``'s robots.txt, which
  answers after 10 s; ``healthy.bench`` has 20 pages. Reported: seconds
  from the spider's start until every healthy page was crawled.
- ``stop``: 600 origins, one request each, every robots.txt answering after
  2 s; the crawl is stopped (as one SIGINT does) 1 s in. Reported: robots.txt
  requests that reached the server after the stop, and seconds from the stop
  to the spider's close.
- ``delay``: ``Crawl-delay: 1`` and 9 pages, Scrapy's default random delay.
  Reported: the shortest and the mean gap between two pages.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import time
from pathlib import Path
from statistics import mean
from typing import Any

from benchmarks._common import REPO_ROOT, module_command, render_table
from tests.helpers.docs_tables import record, write_recorded

PROBES = ("overflow", "stop", "delay")
VARIANTS = {
    "overflow": ("builtin", "ours", "obey-false"),
    "stop": ("builtin", "ours"),
    "delay": ("builtin", "ours"),
}


def _child(probe: str, variant: str) -> dict[str, Any]:
    """Run one crawl in this process and measure it."""
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.defer import deferred_from_coro

    from benchmarks.sites import Answer, HostServer, get_reactor

    robots = b"User-agent: *\nDisallow: /private/\n"

    def answer(host: str, path: str) -> Answer:
        if path != "/robots.txt":
            return Answer(b"<html><body>page</body></html>")
        if probe == "delay":
            return Answer(b"User-agent: *\nCrawl-delay: 1\n", "text/plain")
        slow = probe == "stop" or host.startswith("slow.")
        if not slow:
            return Answer(robots, "text/plain")
        return Answer(robots, "text/plain", 10.0 if probe == "overflow" else 2.0)

    port: list[int] = []

    def starts() -> list[str]:
        def url(host: str, path: str) -> str:
            return f"http://{host}:{port[0]}{path}"

        if probe == "overflow":
            return [url("slow.bench", f"/{n}") for n in range(1100)] + [
                url("healthy.bench", f"/{n}") for n in range(20)
            ]
        if probe == "stop":
            return [url(f"site{n}.bench", "/") for n in range(600)]
        return [url("delayed.bench", f"/{n}") for n in range(9)]

    settings: dict[str, Any] = {
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": variant != "obey-false",
        "TWISTED_DNS_RESOLVER": "benchmarks.sites.LoopbackResolver",
        "HTTPPROXY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 30,
    }
    if variant == "ours":
        settings["ADDONS"] = {"scrapy_robotrules.Addon": 0}
    marks: dict[str, float] = {}
    healthy_done: list[float] = []

    class ProbeSpider(Spider):
        name = "probe"

        async def start(self) -> Any:
            for start_url in starts():
                yield Request(start_url, callback=self.parse, dont_filter=True)

        def parse(self, response: Any) -> None:
            if "healthy." in response.url:
                healthy_done.append(time.monotonic())

    process = CrawlerProcess(settings)  # installs the reactor the settings ask for
    crawler = process.create_crawler(ProbeSpider)
    reactor = get_reactor()
    server = HostServer(answer, arrivals=True)
    arrivals = server.arrivals
    assert arrivals is not None
    port.append(server.port)

    def opened() -> None:
        marks["opened"] = time.monotonic()
        if probe == "stop":

            def stop() -> None:
                marks["stop"] = time.monotonic()
                deferred_from_coro(crawler.stop_async())

            reactor.callLater(1.0, stop)

    crawler.signals.connect(opened, signal=signals.spider_opened)

    def closed() -> None:
        marks.setdefault("closed", time.monotonic())

    crawler.signals.connect(closed, signal=signals.spider_closed)
    crawler.signals.connect(closed, signal=signals.engine_stopped)
    process.crawl(crawler)
    process.start()
    result: dict[str, Any] = {"probe": probe, "variant": variant}
    if probe == "overflow":
        result["healthy_s"] = (
            max(healthy_done) - marks["opened"] if len(healthy_done) == 20 else None
        )
    elif probe == "stop":
        stop_at = marks["stop"]
        result["robots_after_stop"] = sum(
            1 for t, _, path in arrivals if path == "/robots.txt" and t > stop_at
        )
        result["stop_s"] = marks["closed"] - stop_at
    else:
        pages = [t for t, _, path in arrivals if path != "/robots.txt"]
        spacing = [b - a for a, b in itertools.pairwise(pages)]
        result["min_gap"] = min(spacing) if spacing else None
        result["mean_gap"] = mean(spacing) if spacing else None
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--probes", default=",".join(PROBES))
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="write the result table into docs/benchmarks.rst, between its markers",
    )
    parser.add_argument("--child", nargs=2, metavar=("PROBE", "VARIANT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
        return
    results = []
    for probe in args.probes.split(","):
        if probe not in PROBES:
            parser.error(f"--probes: choose from {', '.join(PROBES)}, not {probe!r}")
        for variant in VARIANTS[probe]:
            output = subprocess.run(
                module_command(__file__, "--child", probe, variant),
                cwd=REPO_ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            results.append(json.loads(output.strip().splitlines()[-1]))
    rows = []
    for r in results:
        figures = {k: v for k, v in r.items() if k not in ("probe", "variant")}
        text = ", ".join(
            f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()
        )
        rows.append((r["probe"], r["variant"], text))
    print(render_table(("probe", "variant", "figures"), rows))
    record("waiting", ("probe", "variant", "figures"), rows)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if args.write_docs:
        write_recorded(f"python -m benchmarks.waiting --probes {args.probes}")


if __name__ == "__main__":
    main()
