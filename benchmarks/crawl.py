"""Benchmark real crawls of many sites: Scrapy's built-in robots.txt middleware, ours, none.

Usage::

    python benchmarks/crawl.py [--quick] [--sites N] [--pages P] [--scenarios 1,2,3,fleet]
                               [--max-time S] [--origins N] [--no-memory] [--json PATH]
                               [--fleet-sites N] [--workers W] [--fleet-rounds R]

    python benchmarks/crawl.py --scenarios fleet --no-memory   # the fleet scenario alone

The issue asks for 2,000 sites x 5 pages; on a 2-core machine one such
crawl takes 80-90 s (about 110 pages/s, server and crawler sharing a core),
so the three scenarios would take about 16 minutes. The default is therefore
800 sites x 5 pages (``--sites 2000`` gives the full size) with a 120 s cap
per crawl, which finishes in under 10 minutes; the size is printed with the
results.

Each crawl starts, in its own process, a Twisted web server on 127.0.0.1
(port 0) that plays ``--sites`` sites chosen by the ``Host`` header
(``site<i>.bench``, resolved to 127.0.0.1 by ``sites.LoopbackResolver``
through ``TWISTED_DNS_RESOLVER``), each with a robots.txt and ``--pages``
pages that link to each other, and crawls them all from their home pages.
Scenarios:

1. fast: every robots.txt answers at once;
2. slow robots: 5% of the robots.txt answer after 10 s, 2% never answer;
3. many disallowed: 30% of each site's pages are disallowed.

Each scenario runs three variants: ``builtin`` (Scrapy's
``RobotsTxtMiddleware``, ``ROBOTSTXT_OBEY=True``), ``ours`` (the add-on,
``ROBOTSTXT_OBEY=True``) and ``obey-false`` (``ROBOTSTXT_OBEY=False``), with
the same settings otherwise: ``CONCURRENT_REQUESTS=32``,
``CONCURRENT_REQUESTS_PER_DOMAIN=4``, ``DOWNLOAD_TIMEOUT=30``, no delays,
``LOG_LEVEL=WARNING``, telnet off. Server and crawler share the process (and
so a core). Reported per variant: wall time (spider opened to closed), the
time until 90% of its pages were crawled, pages per second, peak RSS
(``ru_maxrss`` of that process), requests forbidden by robots.txt, and
requests dropped because robots.txt stayed unreachable (ours only).

"Pages it crawls" is the number of pages the variant crawled when it ran to
its end. A crawl still running after ``--max-time`` seconds is stopped and
marked "capped"; its 90% mark is then taken against the pages it would crawl
by design (all pages without robots.txt; the allowed ones with the built-in
middleware, which allows everything when robots.txt fails; the allowed ones
of the sites whose robots.txt answers with ours, which drops the requests of
an unreachable origin after ``ROBOTRULES_UNREACHABLE_TIMEOUT``), and shown as
"> cap" if not reached. The cap exists because scenario 2 with ours lasts at
least 90 s (3 download attempts of 30 s) plus the 300 s unreachable timeout,
which alone would not fit the 10-minute budget of a default run.

The fleet scenario (``--scenarios fleet``, or ``4``; not run by default)
compares ``ROBOTRULES_STORE = "memory"`` (each crawler its own rules) with a
Redis store shared by a fleet of ``--workers`` (4) Scrapy processes crawling
``--fleet-sites`` (500) sites of ``--pages`` pages, all robots.txt answering
at once and allowing every page. The sites server runs in a process of its
own, shared by the fleet, and counts the robots.txt requests it answers (per
site, too). The redis variant starts a fresh ``redis-server`` on a free port
of 127.0.0.1 (``--save '' --appendonly no``, in a temporary directory) and
kills it after the round; without ``redis-server`` on the PATH the benchmark
stops with an error. Each crawler runs the add-on with the settings above
(``CONCURRENT_REQUESTS=32`` each) and crawls its share of the pages, as a
shared queue would deal them out: the pages of all sites numbered in order,
crawler ``k`` gets those numbered ``k``, ``k + workers``, ..., as start URLs,
without following links. So no page is crawled twice, and (with at least as
many pages per site as crawlers) every crawler needs every site's
robots.txt: by design ``workers x sites`` fetches with memory, ``sites`` with
Redis, which the targets check. The crawlers start together (each reports
ready, then all get a go) and the fleet's wall time runs from the first
spider opened to the last closed. The variants run in ``--fleet-rounds`` (5)
rounds, alternating which goes first; per variant, the round with the median
pages/s is reported, with the range over all rounds. Reported: robots.txt
requests the server answered, the crawlers' summed ``robotrules/request_count``,
``store/hits``, ``fleet/waited``, ``store/errors``, pages crawled, wall
time, the fleet's pages per second, and redis/memory ratios. A default run
(5 rounds of 4 x 500 sites x 5 pages per variant) takes about 3 minutes on
2 cores; ``--quick`` runs 100 sites once. With local sites a robots.txt
costs as little as a page, and the fleet (4 crawlers, server and Redis on 2
cores) is CPU-bound: pages/s weighs the CPU that the saved robots.txt
fetches free against the CPU the store's work takes, not the network time a
real fleet would save.

A separate part measures memory per cached origin: ``--origins`` origins
held in one ``RobotRules`` (engine only, no crawl), filled with the corpus's
robots.txt files in turn (each body copied inside the traced region, so an
engine that kept its input would be charged for it). Each origin's own
increase of tracemalloc's traced memory is recorded; the median over the
origins is reported, with p10, p90 and the mean (which a few large files
dominate: the corpus's mean file is 8 times its median one).

Targets: scenario 1, ours' wall time within 10% of obey-false; scenario 2,
the built-in at least 2.5x ours to reach 90% and ours within 25% of
obey-false to reach 90%; memory, median at most 2 KB per origin.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import (
    REPO_ROOT,
    Row,
    distribution_version,
    environment,
    fmt_bytes,
    fmt_ratio,
    fmt_seconds,
    load_corpus,
    progress,
    ratio,
    render_table,
    use_checkout,
)

use_checkout()
sys.path.insert(0, str(REPO_ROOT / "tests"))
from redisserver import RedisServer  # noqa: E402  (the tests' Redis launcher)

FULL_SITES = 2000
"""The size the issue asks for (2,000 sites x 5 pages); too slow for a default run here."""
DEFAULT_SITES = 800
DEFAULT_PAGES = 5
QUICK_SITES = 200
DEFAULT_MAX_TIME = 120.0
DEFAULT_ORIGINS = 100_000
QUICK_ORIGINS = 10_000
MEMORY_TARGET = 2048

DEFAULT_FLEET_SITES = 500
QUICK_FLEET_SITES = 100
DEFAULT_WORKERS = 4
DEFAULT_FLEET_ROUNDS = 5
QUICK_FLEET_ROUNDS = 1

VARIANTS = ("builtin", "ours", "obey-false")
FLEET = 4
"""The fleet scenario's number (``--scenarios fleet`` or ``4``)."""
FLEET_VARIANTS = ("memory", "redis")
SCENARIOS: dict[int, str] = {
    1: "fast robots.txt",
    2: "slow robots.txt (5% 10 s, 2% never)",
    3: "30% disallowed",
    FLEET: "fleet",
}
COMMON_SETTINGS: dict[str, Any] = {
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    "DOWNLOAD_TIMEOUT": 30,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "TELNETCONSOLE_ENABLED": False,
    "TWISTED_DNS_RESOLVER": "sites.LoopbackResolver",
}
HREF = re.compile(rb'href="([^"]+)"')


# --------------------------------------------------------------------------
# One crawl (runs in a worker process)
# --------------------------------------------------------------------------


def build_plan(scenario: int, sites: int, pages: int) -> Any:
    from sites import SitePlan

    if scenario == 2:
        return SitePlan.build(sites, pages, slow_share=0.05, hang_share=0.02, slow_delay=10.0)
    if scenario == 3:
        return SitePlan.build(sites, pages, disallowed_share=0.30)
    return SitePlan.build(sites, pages)


def variant_settings(variant: str) -> dict[str, Any]:
    settings = dict(COMMON_SETTINGS)
    settings["ROBOTSTXT_OBEY"] = variant != "obey-false"
    if variant == "ours":
        settings["ADDONS"] = {"scrapy_robotrules.Addon": 0}
    return settings


def expected_pages(plan: Any, variant: str) -> int:
    """Pages the variant crawls by design if it runs to its end (see the module docstring)."""
    if variant == "obey-false":
        return int(plan.total_pages())
    return int(plan.allowed_pages(skip_hang=variant == "ours"))


@dataclass
class CrawlResult:
    scenario: int
    variant: str
    sites: int
    pages_per_site: int
    wall: float
    capped: bool
    pages: int
    expected_pages: int
    t90: float | None
    t90_of: int
    pages_per_second: float
    max_rss: int
    forbidden: int
    dropped: int
    robots_requests: int
    download_errors: int
    close_reason: str


def time_to_share(times: Sequence[float], total: int, share: float = 0.9) -> float | None:
    """When the ``ceil(share * total)``-th page was crawled (``None`` if never)."""
    need = max(1, math.ceil(share * total))
    return times[need - 1] if len(times) >= need else None


def max_rss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


def run_crawl(scenario: int, variant: str, sites: int, pages: int, max_time: float) -> CrawlResult:
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.http import Response
    from scrapy.settings.default_settings import TWISTED_REACTOR
    from scrapy.utils.reactor import install_reactor
    from sites import SitesServer, get_reactor

    plan = build_plan(scenario, sites, pages)
    process = CrawlerProcess(variant_settings(variant))
    # The server listens before the crawl starts, so the reactor the crawler
    # wants (Scrapy's default) must be installed first.
    install_reactor(TWISTED_REACTOR)
    server = SitesServer(plan)
    times: list[float] = []
    clock: dict[str, float] = {}
    start_urls = [server.url(i) for i in range(sites)]

    class BenchSpider(scrapy.Spider):
        name = "bench"

        async def start(self) -> Any:
            for url in start_urls:
                yield scrapy.Request(url)

        def parse(self, response: Response, **kwargs: Any) -> Any:
            times.append(time.monotonic() - clock["start"])
            for href in HREF.findall(response.body):
                yield response.follow(href.decode())

    crawler = process.create_crawler(BenchSpider)

    def opened(spider: scrapy.Spider) -> None:
        clock["start"] = time.monotonic()

    def closed(spider: scrapy.Spider, reason: str) -> None:
        clock["end"] = time.monotonic()
        clock["reason_" + reason] = 0.0

    crawler.signals.connect(opened, signal=signals.spider_opened)
    crawler.signals.connect(closed, signal=signals.spider_closed)

    def result(capped: bool) -> CrawlResult:
        end = clock.get("end", time.monotonic())
        wall = end - clock.get("start", end)
        stats = crawler.stats

        def get(key: str) -> int:
            return int(stats.get_value(key, 0)) if stats is not None else 0

        expected = expected_pages(plan, variant)
        of = expected if capped else len(times)
        reasons = [k.removeprefix("reason_") for k in clock if k.startswith("reason_")]
        return CrawlResult(
            scenario=scenario,
            variant=variant,
            sites=sites,
            pages_per_site=pages,
            wall=wall,
            capped=capped,
            pages=len(times),
            expected_pages=expected,
            t90=time_to_share(times, of),
            t90_of=of,
            pages_per_second=len(times) / wall if wall > 0 else 0.0,
            max_rss=max_rss_bytes(),
            forbidden=get("robotstxt/forbidden") + get("robotrules/forbidden"),
            dropped=get("robotrules/unreachable"),
            robots_requests=server.robots_requests,
            download_errors=get("downloader/exception_count"),
            close_reason=",".join(reasons) or ("capped" if capped else "?"),
        )

    def cap() -> None:
        # Held requests may keep a graceful stop waiting for minutes: report
        # what was crawled so far and leave at once.
        print(json.dumps(asdict(result(capped=True))), flush=True)
        os._exit(0)

    get_reactor().callLater(max_time, cap)
    process.crawl(crawler)
    process.start()
    return result(capped=False)


# --------------------------------------------------------------------------
# The fleet scenario: the sites server, and one crawler of the fleet
# (each runs in a worker process)
# --------------------------------------------------------------------------


def fleet_settings(store: str) -> dict[str, Any]:
    settings = variant_settings("ours")
    settings["ROBOTRULES_STORE"] = store
    return settings


def fleet_share(plan: Any, workers: int, index: int) -> list[tuple[int, str]]:
    """Worker ``index``'s share of every site's pages: (site, path) pairs.

    The pages of all sites, numbered in order (site 0's first, then site
    1's, ...), are dealt out in turn, as a shared queue would be: worker
    ``k`` gets the pages numbered ``k``, ``k + workers``, ... With at least
    as many pages per site as workers, every worker gets a page of every
    site, so every worker needs every robots.txt; no page is crawled twice.
    """
    pairs = [(site, path) for site in range(plan.sites) for path in plan.paths(site)]
    return pairs[index::workers]


def run_fleet_crawler(
    store: str, port: int, *, sites: int, pages: int, workers: int, index: int, max_time: float
) -> dict[str, Any]:
    """Crawl this worker's share of the pages (no links followed), after a "go" on stdin."""
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.http import Response
    from scrapy.settings.default_settings import TWISTED_REACTOR
    from scrapy.utils.reactor import install_reactor
    from sites import SitePlan, get_reactor, host_name

    plan = SitePlan.build(sites, pages)
    start_urls = [
        f"http://{host_name(site)}:{port}{path}" for site, path in fleet_share(plan, workers, index)
    ]
    process = CrawlerProcess(fleet_settings(store))
    install_reactor(TWISTED_REACTOR)
    crawled: list[float] = []
    clock: dict[str, float] = {}
    reasons: list[str] = []

    class FleetSpider(scrapy.Spider):
        name = "fleet"

        async def start(self) -> Any:
            for url in start_urls:
                yield scrapy.Request(url)

        def parse(self, response: Response, **kwargs: Any) -> Any:
            crawled.append(time.time())
            return None

    crawler = process.create_crawler(FleetSpider)

    def opened(spider: scrapy.Spider) -> None:
        clock["opened"] = time.time()

    def closed(spider: scrapy.Spider, reason: str) -> None:
        clock["closed"] = time.time()
        reasons.append(reason)

    crawler.signals.connect(opened, signal=signals.spider_opened)
    crawler.signals.connect(closed, signal=signals.spider_closed)

    def result(capped: bool) -> dict[str, Any]:
        now = time.time()
        stats = crawler.stats.get_stats() if crawler.stats is not None else {}
        kept = {
            key: value
            for key, value in stats.items()
            if isinstance(value, (int, float))
            and key.startswith(("robotrules/", "downloader/exception"))
        }
        return {
            "index": index,
            "start_urls": len(start_urls),
            "pages": len(crawled),
            "opened": clock.get("opened", now),
            "closed": clock.get("closed", now),
            "capped": capped,
            "close_reason": ",".join(reasons) or ("capped" if capped else "?"),
            "max_rss": max_rss_bytes(),
            "stats": kept,
        }

    def cap() -> None:
        print(json.dumps(result(capped=True)), flush=True)
        os._exit(0)

    # Started (imports done, crawler built): wait for the whole fleet.
    print("ready", flush=True)
    sys.stdin.readline()
    get_reactor().callLater(max_time, cap)
    process.crawl(crawler)
    process.start()
    return result(capped=False)


def worker(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="crawl.py --worker")
    parser.add_argument("kind", choices=["crawl", "memory", "serve", "fleet"])
    parser.add_argument("--scenario", type=int, default=1)
    parser.add_argument("--variant", choices=VARIANTS, default="ours")
    parser.add_argument("--sites", type=int, default=DEFAULT_SITES)
    parser.add_argument("--pages", type=int, default=DEFAULT_PAGES)
    parser.add_argument("--max-time", type=float, default=DEFAULT_MAX_TIME)
    parser.add_argument("--origins", type=int, default=DEFAULT_ORIGINS)
    parser.add_argument("--store", default="memory")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS)
    parser.add_argument("--index", type=int, default=0)
    args = parser.parse_args(argv)
    answer: dict[str, Any]
    if args.kind == "crawl":
        answer = asdict(
            run_crawl(args.scenario, args.variant, args.sites, args.pages, args.max_time)
        )
    elif args.kind == "serve":
        from sites import serve

        answer = serve(args.sites, args.pages)
    elif args.kind == "fleet":
        answer = run_fleet_crawler(
            args.store,
            args.port,
            sites=args.sites,
            pages=args.pages,
            workers=args.workers,
            index=args.index,
            max_time=args.max_time,
        )
    else:
        answer = measure_origins(args.origins)
    print(json.dumps(answer), flush=True)
    return 0


# --------------------------------------------------------------------------
# Memory per cached origin (runs in a worker process)
# --------------------------------------------------------------------------


def measure_origins(origins: int) -> dict[str, Any]:
    from scrapy_robotrules import RobotRules

    corpus = load_corpus()
    bodies = [f.body for f in corpus.files]
    rules = RobotRules("examplebot", capacity=None)
    per_origin: list[int] = []
    started = time.perf_counter()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for j in range(origins):
        before = tracemalloc.get_traced_memory()[0]
        body = bytes(bytearray(bodies[j % len(bodies)]))
        rules.parse(f"https://site{j}.bench/robots.txt", body)
        per_origin.append(tracemalloc.get_traced_memory()[0] - before)
    total = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    deciles = statistics.quantiles(per_origin, n=10) if len(per_origin) > 1 else per_origin * 9
    return {
        "origins": origins,
        "held": len(rules),
        "files": len(bodies),
        "corpus": corpus.source,
        "median": statistics.median(per_origin),
        "p10": deciles[0],
        "p90": deciles[-1],
        "mean": total / origins,
        "seconds": time.perf_counter() - started,
    }


# --------------------------------------------------------------------------
# Driving the workers
# --------------------------------------------------------------------------


def run_worker(args: Sequence[str], timeout: float) -> tuple[dict[str, Any] | None, str]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", *args]
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


class FleetError(RuntimeError):
    """A fleet round could not run to its end (the message says why)."""


@contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    """A fresh ``redis-server`` on a free port of 127.0.0.1, killed on exit; its URL.

    Started as the tests start theirs (``tests/redisserver.py``).
    """
    if shutil.which("redis-server") is None:
        raise FleetError(REDIS_MISSING)
    directory.mkdir()
    server = RedisServer(directory)
    try:
        server.start()
    except RuntimeError as exc:
        raise FleetError(str(exc)) from None
    try:
        yield server.url
    finally:
        server.stop()


REDIS_MISSING = (
    "the fleet scenario needs redis-server (a real Redis, started on a free port): "
    "install it (apt-get install redis-server, brew install redis) or leave out "
    "--scenarios fleet"
)


def stop_process(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def log_tail(path: Path, lines: int = 15) -> str:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return "\n".join(text.strip().splitlines()[-lines:])


def run_fleet_round(
    variant: str, sites: int, pages: int, workers: int, max_time: float
) -> dict[str, Any]:
    """One fleet crawl: the sites server, ``workers`` crawlers at once, Redis if ``variant``."""
    script = str(Path(__file__).resolve())
    with tempfile.TemporaryDirectory(prefix="robotrules-fleet-") as tmp, ExitStack() as stack:
        directory = Path(tmp)

        def start(name: str, args: Sequence[str], *, stdin: bool) -> subprocess.Popen[str]:
            log = stack.enter_context((directory / f"{name}.log").open("w", encoding="utf-8"))
            proc = subprocess.Popen(
                [sys.executable, script, "--worker", *args],
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                cwd=REPO_ROOT,
            )
            stack.callback(stop_process, proc)
            return proc

        def first_line(name: str, proc: subprocess.Popen[str]) -> str:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line:
                proc.wait()
                raise FleetError(
                    f"{name} exited with status {proc.returncode} before it was ready\n"
                    + log_tail(directory / f"{name}.log")
                )
            return line.strip()

        store = "memory"
        if variant == "redis":
            store = stack.enter_context(redis_server(directory / "redis"))
        size = [f"--sites={sites}", f"--pages={pages}"]
        server = start("server", ["serve", *size], stdin=False)
        port = int(json.loads(first_line("server", server))["port"])
        crawlers = [
            start(
                f"worker{k}",
                [
                    "fleet",
                    *size,
                    f"--store={store}",
                    f"--port={port}",
                    f"--workers={workers}",
                    f"--index={k}",
                    f"--max-time={max_time}",
                ],
                stdin=True,
            )
            for k in range(workers)
        ]
        for k, proc in enumerate(crawlers):
            if first_line(f"worker{k}", proc) != "ready":
                raise FleetError(f"worker{k} said something else than 'ready'")
        go = time.time()
        for proc in crawlers:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.close()
        deadline = time.monotonic() + max_time + 60
        answers: list[dict[str, Any]] = []
        for k, proc in enumerate(crawlers):
            assert proc.stdout is not None
            try:
                proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise FleetError(
                    f"worker{k} still running {max_time + 60:.0f} s after go"
                ) from None
            lines = proc.stdout.read().strip().splitlines()
            if proc.returncode != 0 or not lines:
                raise FleetError(
                    f"worker{k}: exit status {proc.returncode}\n"
                    + log_tail(directory / f"worker{k}.log")
                )
            answers.append(json.loads(lines[-1]))
        ended = time.time()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise FleetError("the sites server did not stop on SIGTERM") from None
        assert server.stdout is not None
        served_lines = server.stdout.read().strip().splitlines()
        if server.returncode != 0 or not served_lines:
            raise FleetError(
                f"sites server: exit status {server.returncode}\n"
                + log_tail(directory / "server.log")
            )
        served: dict[str, Any] = json.loads(served_lines[-1])

    def total(key: str) -> int:
        return sum(int(a["stats"].get(key, 0)) for a in answers)

    opened = min(a["opened"] for a in answers)
    closed = max(a["closed"] for a in answers)
    wall = closed - opened
    crawled = sum(int(a["pages"]) for a in answers)
    return {
        "variant": variant,
        "store": "redis" if variant == "redis" else "memory",
        "sites": sites,
        "pages_per_site": pages,
        "workers": workers,
        "robots_served": served["robots_requests"],
        "origins_fetched": served["origins_fetched"],
        "most_fetches_per_origin": served["most_fetches_per_origin"],
        "pages_served": served["page_requests"],
        "request_count": total("robotrules/request_count"),
        "store_hits": total("robotrules/store/hits"),
        "store_misses": total("robotrules/store/misses"),
        "store_errors": total("robotrules/store/errors"),
        "fleet_waited": total("robotrules/fleet/waited"),
        "fleet_paced": total("robotrules/fleet/paced"),
        "download_errors": total("downloader/exception_count"),
        "pages": crawled,
        "expected_pages": sites * pages,
        "wall": wall,
        "span": ended - go,
        "pages_per_second": crawled / wall if wall > 0 else 0.0,
        "capped": any(a["capped"] for a in answers),
        "max_rss": max(int(a["max_rss"]) for a in answers),
        "crawlers": answers,
    }


def median_round(rounds: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The round with the median pages per second (the upper one of an even count)."""
    if not rounds:
        return None
    ordered = sorted(rounds, key=lambda r: r["pages_per_second"])
    return ordered[len(ordered) // 2]


def fmt_t90(r: dict[str, Any]) -> str:
    if r["t90"] is None:
        return f"> {r['wall']:.1f} s"
    return fmt_seconds(r["t90"])


def t90_bound(r: dict[str, Any] | None) -> tuple[float, bool] | None:
    """(time to 90%, exact?) where a missing 90% mark is a lower bound (the wall time)."""
    if r is None:
        return None
    if r["t90"] is None:
        return r["wall"], False
    return r["t90"], True


def fmt_bound_ratio(num: tuple[float, bool] | None, den: tuple[float, bool] | None) -> str:
    if num is None or den is None or den[0] == 0:
        return "n/a"
    value = num[0] / den[0]
    if num[1] and den[1]:
        return fmt_ratio(value)
    if num[1] and not den[1]:
        return "< " + fmt_ratio(value)
    if den[1] and not num[1]:
        return "> " + fmt_ratio(value)
    return "?"


def verdict_at_most(
    num: tuple[float, bool] | None, den: tuple[float, bool] | None, limit: float
) -> str:
    """PASS/FAIL for num/den <= limit; bounds give a verdict only when they settle it."""
    if num is None or den is None or den[0] == 0:
        return "n/a"
    value = num[0] / den[0]
    if num[1] and den[1]:
        return "PASS" if value <= limit else "FAIL"
    if not num[1] and den[1]:  # true ratio is larger than value
        return "FAIL" if value > limit else "unknown (capped)"
    if num[1] and not den[1]:  # true ratio is smaller than value
        return "PASS" if value <= limit else "unknown (capped)"
    return "unknown (capped)"


def verdict_at_least(
    num: tuple[float, bool] | None, den: tuple[float, bool] | None, limit: float
) -> str:
    if num is None or den is None or den[0] == 0:
        return "n/a"
    value = num[0] / den[0]
    if num[1] and den[1]:
        return "PASS" if value >= limit else "FAIL"
    if num[1] and not den[1]:  # true ratio is smaller than value
        return "FAIL" if value < limit else "unknown (capped)"
    if not num[1] and den[1]:  # true ratio is larger than value
        return "PASS" if value >= limit else "unknown (capped)"
    return "unknown (capped)"


def render_fleet(fleet: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> str:
    """The fleet table: each variant's median round, then redis / memory."""
    headers = [
        f"fleet ({args.workers} crawlers)",
        "robots.txt served",
        "request_count",
        "hits",
        "waited",
        "errors",
        "pages",
        "wall",
        "pages/s (range)",
    ]
    rows: list[Row] = []
    chosen: dict[str, dict[str, Any] | None] = {}
    for variant in FLEET_VARIANTS:
        rounds = fleet[variant]
        r = median_round(rounds)
        chosen[variant] = r
        if r is None:
            rows.append([variant, "failed", *[""] * (len(headers) - 2)])
            continue
        speeds = [x["pages_per_second"] for x in rounds]
        rows.append(
            [
                variant,
                f"{r['robots_served']:,}",
                f"{r['request_count']:,}",
                f"{r['store_hits']:,}",
                f"{r['fleet_waited']:,}",
                f"{r['store_errors']:,}",
                f"{r['pages']:,}/{r['expected_pages']:,}",
                fmt_seconds(r["wall"]) + (" (capped)" if r["capped"] else ""),
                f"{r['pages_per_second']:.0f} ({min(speeds):.0f}-{max(speeds):.0f})",
            ]
        )
    mem, red = chosen["memory"], chosen["redis"]
    if mem is not None and red is not None:
        rows.append(None)
        rows.append(
            [
                "redis / memory",
                fmt_ratio(ratio(red["robots_served"], mem["robots_served"])),
                fmt_ratio(ratio(red["request_count"], mem["request_count"])),
                "",
                "",
                "",
                "",
                fmt_ratio(ratio(red["wall"], mem["wall"])),
                fmt_ratio(ratio(red["pages_per_second"], mem["pages_per_second"])),
            ]
        )
    count = max(len(fleet["memory"]), len(fleet["redis"]))
    median = (
        "One round per variant."
        if count == 1
        else f"Each variant: the median of {count} rounds by pages/s (range: all rounds)."
    )
    return "\n".join(
        [
            render_table(headers, rows),
            f"{args.fleet_sites:,} sites x {args.pages} pages; each crawler crawls its share "
            f"(1/{args.workers}) of every site's pages.",
            median,
            "robots.txt served: robots.txt requests the sites server answered; request_count,",
            "hits, waited, errors: robotrules/request_count, store/hits, fleet/waited and",
            "store/errors summed over the crawlers; wall: first spider opened to last closed;",
            "pages/s: the fleet's pages / wall.",
        ]
    )


def fleet_targets(
    fleet: dict[str, list[dict[str, Any]]], args: argparse.Namespace
) -> list[dict[str, str]]:
    """Each robots.txt fetched once per fleet with Redis, once per crawler with memory."""
    targets = []
    for variant, per_origin in (("redis", 1), ("memory", args.workers)):
        rounds = fleet[variant]
        want = per_origin * args.fleet_sites
        served = sorted({r["robots_served"] for r in rounds})
        ok = bool(rounds) and all(
            r["robots_served"] == want
            and r["origins_fetched"] == args.fleet_sites
            and r["most_fetches_per_origin"] == per_origin
            for r in rounds
        )
        targets.append(
            {
                "target": f"fleet: {variant} fetches each robots.txt {per_origin}x "
                f"({want:,} in all)",
                "value": ", ".join(f"{s:,}" for s in served) or "n/a",
                "verdict": ("PASS" if ok else "FAIL") if rounds else "n/a",
            }
        )
    return targets


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark real crawls: built-in robots.txt middleware vs ours vs none."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {QUICK_SITES} sites, {QUICK_ORIGINS:,} origins, "
        f"{QUICK_FLEET_SITES} fleet sites and {QUICK_FLEET_ROUNDS} fleet round unless given",
    )
    parser.add_argument("--sites", type=int, help=f"sites per crawl (default {DEFAULT_SITES})")
    parser.add_argument(
        "--pages", type=int, default=DEFAULT_PAGES, help=f"pages per site (default {DEFAULT_PAGES})"
    )
    parser.add_argument(
        "--scenarios",
        default="1,2,3",
        help="comma-separated scenarios to run: 1, 2, 3, fleet (or 4) (default 1,2,3)",
    )
    parser.add_argument(
        "--fleet-sites",
        type=int,
        help=f"sites of the fleet scenario (default {DEFAULT_FLEET_SITES}, "
        f"{QUICK_FLEET_SITES} with --quick)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=DEFAULT_WORKERS,
        help=f"crawler processes of the fleet (default {DEFAULT_WORKERS})",
    )
    parser.add_argument(
        "--fleet-rounds",
        type=int,
        help=f"fleet crawls per variant, alternating (default {DEFAULT_FLEET_ROUNDS}, "
        f"{QUICK_FLEET_ROUNDS} with --quick); the median one is reported",
    )
    parser.add_argument(
        "--max-time",
        type=float,
        default=DEFAULT_MAX_TIME,
        help=f"stop a crawl after this many seconds (default {DEFAULT_MAX_TIME:.0f})",
    )
    parser.add_argument(
        "--origins",
        type=int,
        help=f"origins for the memory part (default {DEFAULT_ORIGINS:,})",
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory-per-origin part")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    names = [s.strip().lower() for s in args.scenarios.split(",") if s.strip()]
    try:
        args.scenario_list = sorted({FLEET if s == "fleet" else int(s) for s in names})
    except ValueError:
        parser.error(f"--scenarios: not a list of numbers or 'fleet': {args.scenarios!r}")
    unknown = [s for s in args.scenario_list if s not in SCENARIOS]
    if unknown or not args.scenario_list:
        parser.error(
            f"--scenarios: choose from 1, 2, 3, fleet (or {FLEET}), not {args.scenarios!r}"
        )
    if args.sites is None:
        args.sites = QUICK_SITES if args.quick else DEFAULT_SITES
    if args.origins is None:
        args.origins = QUICK_ORIGINS if args.quick else DEFAULT_ORIGINS
    if args.fleet_sites is None:
        args.fleet_sites = QUICK_FLEET_SITES if args.quick else DEFAULT_FLEET_SITES
    if args.fleet_rounds is None:
        args.fleet_rounds = QUICK_FLEET_ROUNDS if args.quick else DEFAULT_FLEET_ROUNDS
    positive = [args.sites, args.pages, args.origins, args.max_time]
    positive += [args.fleet_sites, args.workers, args.fleet_rounds]
    if min(positive) <= 0:
        parser.error(
            "--sites, --pages, --origins, --max-time, --fleet-sites, --workers and "
            "--fleet-rounds must be positive"
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return worker(argv[1:])
    args = parse_args(argv)
    run_started = time.perf_counter()

    crawl_list = [s for s in args.scenario_list if s != FLEET]
    if FLEET in args.scenario_list and shutil.which("redis-server") is None:
        print(f"error: {REDIS_MISSING}", file=sys.stderr)
        return 2
    env = environment()
    if crawl_list:
        print(
            f"crawl benchmark: {args.sites:,} sites x {args.pages} pages per crawl, "
            f"cap {args.max_time:.0f} s per crawl; scenarios {','.join(map(str, crawl_list))}"
        )
        if args.sites * args.pages < FULL_SITES * DEFAULT_PAGES:
            print(
                f"(reduced size: the issue's full size is {FULL_SITES:,} sites x {DEFAULT_PAGES} "
                f"pages, --sites {FULL_SITES}, which takes about 16 minutes on 2 cores)"
            )
    if FLEET in args.scenario_list:
        print(
            f"fleet benchmark: {args.workers} crawler processes, {args.fleet_sites:,} sites x "
            f"{args.pages} pages, ROBOTRULES_STORE memory vs redis, {args.fleet_rounds} "
            f"round{'' if args.fleet_rounds == 1 else 's'} each, "
            f"cap {args.max_time:.0f} s per crawl"
        )
    print(
        f"{env['python']} on {env['platform']} ({env['cpus']} CPUs); "
        f"Scrapy {distribution_version('scrapy')}, Twisted {distribution_version('twisted')}"
    )
    print()

    results: dict[int, dict[str, dict[str, Any] | None]] = {}
    failures: list[str] = []
    for scenario in crawl_list:
        results[scenario] = {}
        for variant in VARIANTS:
            progress(f"scenario {scenario} ({SCENARIOS[scenario]}), {variant} ...")
            t0 = time.perf_counter()
            answer, err = run_worker(
                [
                    "crawl",
                    f"--scenario={scenario}",
                    f"--variant={variant}",
                    f"--sites={args.sites}",
                    f"--pages={args.pages}",
                    f"--max-time={args.max_time}",
                ],
                timeout=args.max_time + 120,
            )
            results[scenario][variant] = answer
            if answer is None:
                failures.append(f"scenario {scenario} {variant}: {err}")
                progress(f"  failed: {err}")
            else:
                progress(
                    f"  {answer['pages']} pages in {answer['wall']:.1f} s "
                    f"({time.perf_counter() - t0:.1f} s with start-up)"
                    + (" [capped]" if answer["capped"] else "")
                )

    if results:
        headers = [
            "scenario / variant",
            "wall",
            "to 90%",
            "pages",
            "pages/s",
            "peak RSS",
            "forbidden",
            "dropped",
            "robots req",
        ]
        rows: list[Row] = []
        for scenario, by_variant in results.items():
            rows.append(None)
            rows.append([f"{scenario}. {SCENARIOS[scenario]}", "", "", "", "", "", "", "", ""])
            for variant in VARIANTS:
                r = by_variant[variant]
                if r is None:
                    rows.append([f"  {variant}", "failed", "", "", "", "", "", "", ""])
                    continue
                rows.append(
                    [
                        f"  {variant}",
                        fmt_seconds(r["wall"]) + (" (capped)" if r["capped"] else ""),
                        fmt_t90(r),
                        f"{r['pages']:,}/{r['expected_pages']:,}",
                        f"{r['pages_per_second']:.0f}",
                        fmt_bytes(r["max_rss"]),
                        f"{r['forbidden']:,}",
                        f"{r['dropped']:,}" if variant == "ours" else "-",
                        f"{r['robots_requests']:,}",
                    ]
                )
        print(render_table(headers, rows[1:]))
        print(
            "pages: crawled / expected by design; to 90%: of the pages crawled "
            "(of the expected ones when capped)"
        )
        print()

        ratio_rows: list[Row] = []
        for scenario, by_variant in results.items():
            ours, builtin, free = (by_variant[v] for v in ("ours", "builtin", "obey-false"))
            wall_ratio = (
                ratio(ours["wall"], free["wall"]) if ours is not None and free is not None else None
            )
            ratio_rows.append(
                [
                    f"{scenario}. {SCENARIOS[scenario]}",
                    fmt_ratio(wall_ratio),
                    fmt_bound_ratio(t90_bound(ours), t90_bound(free)),
                    fmt_bound_ratio(t90_bound(builtin), t90_bound(ours)),
                ]
            )
        print(
            render_table(
                ["ratios", "ours/obey-false wall", "ours/obey-false to 90%", "builtin/ours to 90%"],
                ratio_rows,
            )
        )
        print()

    targets: list[dict[str, str]] = []
    if 1 in results:
        ours, free = results[1]["ours"], results[1]["obey-false"]
        num = (ours["wall"], not ours["capped"]) if ours is not None else None
        den = (free["wall"], not free["capped"]) if free is not None else None
        targets.append(
            {
                "target": "1. ours wall time <= 1.10 x obey-false",
                "value": fmt_bound_ratio(num, den),
                "verdict": verdict_at_most(num, den, 1.10),
            }
        )
    if 2 in results:
        ours, builtin, free = (results[2][v] for v in ("ours", "builtin", "obey-false"))
        targets.append(
            {
                "target": "2. builtin to 90% >= 2.5 x ours",
                "value": fmt_bound_ratio(t90_bound(builtin), t90_bound(ours)),
                "verdict": verdict_at_least(t90_bound(builtin), t90_bound(ours), 2.5),
            }
        )
        targets.append(
            {
                "target": "2. ours to 90% <= 1.25 x obey-false",
                "value": fmt_bound_ratio(t90_bound(ours), t90_bound(free)),
                "verdict": verdict_at_most(t90_bound(ours), t90_bound(free), 1.25),
            }
        )

    fleet: dict[str, list[dict[str, Any]]] = {}
    if FLEET in args.scenario_list:
        fleet = {variant: [] for variant in FLEET_VARIANTS}
        for n in range(args.fleet_rounds):
            # Alternate the order, so neither variant always runs first.
            order = FLEET_VARIANTS if n % 2 == 0 else FLEET_VARIANTS[::-1]
            for variant in order:
                progress(
                    f"fleet, {variant}, round {n + 1}/{args.fleet_rounds}: {args.workers} "
                    f"crawlers x {args.fleet_sites} sites ..."
                )
                try:
                    answer = run_fleet_round(
                        variant, args.fleet_sites, args.pages, args.workers, args.max_time
                    )
                except FleetError as exc:
                    failures.append(f"fleet {variant} round {n + 1}: {exc}")
                    progress(f"  failed: {exc}")
                    continue
                fleet[variant].append(answer)
                progress(
                    f"  {answer['pages']} pages in {answer['wall']:.1f} s "
                    f"({answer['pages_per_second']:.0f} pages/s), "
                    f"{answer['robots_served']} robots.txt served"
                    + (" [capped]" if answer["capped"] else "")
                )
        print(render_fleet(fleet, args))
        print()
        targets.extend(fleet_targets(fleet, args))

    memory: dict[str, Any] | None = None
    if not args.no_memory:
        progress(f"memory per cached origin ({args.origins:,} origins) ...")
        memory, err = run_worker(["memory", f"--origins={args.origins}"], timeout=900)
        if memory is None:
            failures.append(f"memory: {err}")
        if memory is not None:
            print(
                f"memory per cached origin: {memory['held']:,} origins in one RobotRules "
                f"({memory['files']:,} corpus files in turn, from {memory['corpus']}), "
                "each origin measured: "
                f"median {memory['median']:.0f} B/origin "
                f"(p10 {memory['p10']:.0f}, p90 {memory['p90']:.0f}, "
                f"overall mean {memory['mean']:.0f}); filled in {memory['seconds']:.1f} s "
                "under tracemalloc"
            )
            print()
            value = memory["median"]
            targets.append(
                {
                    "target": f"memory: median <= {fmt_bytes(MEMORY_TARGET)} per origin",
                    "value": f"{value:.0f} B",
                    "verdict": "PASS" if value <= MEMORY_TARGET else "FAIL",
                }
            )

    if targets:
        print(
            render_table(
                ["target", "value", "verdict"],
                [[t["target"], t["value"], t["verdict"]] for t in targets],
            )
        )
        print()
    elapsed = time.perf_counter() - run_started
    print(f"total run time: {elapsed:.0f} s")
    for failure in failures:
        print(f"FAILED: {failure}")

    if args.json:
        data = {
            "environment": env,
            "scrapy": distribution_version("scrapy"),
            "twisted": distribution_version("twisted"),
            "sites": args.sites,
            "pages": args.pages,
            "max_time": args.max_time,
            "settings": COMMON_SETTINGS,
            "crawls": {str(s): v for s, v in results.items()},
            "fleet": {
                "sites": args.fleet_sites,
                "workers": args.workers,
                "rounds": fleet,
            }
            if fleet
            else None,
            "memory": memory,
            "targets": targets,
            "failures": failures,
            "seconds": elapsed,
        }
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        progress(f"results written to {args.json}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
