"""Benchmark real crawls of many sites: Scrapy's built-in robots.txt middleware, ours, none.

Usage::

    python benchmarks/crawl.py [--quick] [--sites N] [--pages P] [--scenarios 1,2,3]
                               [--max-time S] [--origins N] [--no-memory] [--json PATH]

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
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import (
    REPO_ROOT,
    CorpusNotFoundError,
    Row,
    corpus_dir,
    distribution_version,
    environment,
    fmt_bytes,
    fmt_ratio,
    fmt_seconds,
    progress,
    ratio,
    render_table,
    use_checkout,
)

use_checkout()

FULL_SITES = 2000
"""The size the issue asks for (2,000 sites x 5 pages); too slow for a default run here."""
DEFAULT_SITES = 800
DEFAULT_PAGES = 5
QUICK_SITES = 200
DEFAULT_MAX_TIME = 120.0
DEFAULT_ORIGINS = 100_000
QUICK_ORIGINS = 10_000
MEMORY_TARGET = 2048

VARIANTS = ("builtin", "ours", "obey-false")
SCENARIOS: dict[int, str] = {
    1: "fast robots.txt",
    2: "slow robots.txt (5% 10 s, 2% never)",
    3: "30% disallowed",
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


def worker(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="crawl.py --worker")
    parser.add_argument("kind", choices=["crawl", "memory"])
    parser.add_argument("--scenario", type=int, default=1)
    parser.add_argument("--variant", choices=VARIANTS, default="ours")
    parser.add_argument("--sites", type=int, default=DEFAULT_SITES)
    parser.add_argument("--pages", type=int, default=DEFAULT_PAGES)
    parser.add_argument("--max-time", type=float, default=DEFAULT_MAX_TIME)
    parser.add_argument("--origins", type=int, default=DEFAULT_ORIGINS)
    args = parser.parse_args(argv)
    answer: dict[str, Any]
    if args.kind == "crawl":
        answer = asdict(
            run_crawl(args.scenario, args.variant, args.sites, args.pages, args.max_time)
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

    robots = corpus_dir() / "robots"
    bodies = [p.read_bytes() for p in sorted(robots.iterdir()) if p.is_file()]
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


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark real crawls: built-in robots.txt middleware vs ours vs none."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {QUICK_SITES} sites and {QUICK_ORIGINS:,} origins unless given",
    )
    parser.add_argument("--sites", type=int, help=f"sites per crawl (default {DEFAULT_SITES})")
    parser.add_argument(
        "--pages", type=int, default=DEFAULT_PAGES, help=f"pages per site (default {DEFAULT_PAGES})"
    )
    parser.add_argument(
        "--scenarios", default="1,2,3", help="comma-separated scenarios to run (default 1,2,3)"
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
    try:
        args.scenario_list = sorted({int(s) for s in args.scenarios.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--scenarios: not a list of numbers: {args.scenarios!r}")
    unknown = [s for s in args.scenario_list if s not in SCENARIOS]
    if unknown or not args.scenario_list:
        parser.error(f"--scenarios: choose from {sorted(SCENARIOS)}, not {args.scenarios!r}")
    if args.sites is None:
        args.sites = QUICK_SITES if args.quick else DEFAULT_SITES
    if args.origins is None:
        args.origins = QUICK_ORIGINS if args.quick else DEFAULT_ORIGINS
    if args.sites < 1 or args.pages < 1 or args.origins < 1 or args.max_time <= 0:
        parser.error("--sites, --pages, --origins and --max-time must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return worker(argv[1:])
    args = parse_args(argv)
    run_started = time.perf_counter()

    env = environment()
    print(
        f"crawl benchmark: {args.sites:,} sites x {args.pages} pages per crawl, "
        f"cap {args.max_time:.0f} s per crawl; scenarios {','.join(map(str, args.scenario_list))}"
    )
    if args.sites * args.pages < FULL_SITES * DEFAULT_PAGES:
        print(
            f"(reduced size: the issue's full size is {FULL_SITES:,} sites x {DEFAULT_PAGES} "
            f"pages, --sites {FULL_SITES}, which takes about 16 minutes on 2 cores)"
        )
    print(
        f"{env['python']} on {env['platform']} ({env['cpus']} CPUs); "
        f"Scrapy {distribution_version('scrapy')}, Twisted {distribution_version('twisted')}"
    )
    print()

    results: dict[int, dict[str, dict[str, Any] | None]] = {}
    failures: list[str] = []
    for scenario in args.scenario_list:
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

    memory: dict[str, Any] | None = None
    if not args.no_memory:
        progress(f"memory per cached origin ({args.origins:,} origins) ...")
        try:
            corpus_dir()
        except CorpusNotFoundError as exc:
            failures.append(f"memory: {exc}")
        else:
            memory, err = run_worker(["memory", f"--origins={args.origins}"], timeout=900)
            if memory is None:
                failures.append(f"memory: {err}")
        if memory is not None:
            print(
                f"memory per cached origin: {memory['held']:,} origins in one RobotRules "
                f"({memory['files']:,} corpus files in turn), each origin measured: "
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
