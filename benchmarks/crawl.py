"""Benchmark real crawls of many sites: Scrapy's built-in robots.txt middleware, ours, none.

Usage::

    python -m benchmarks.crawl [--quick] [--sites N] [--pages P] [--scenarios 1,2,3,fleet]
                               [--max-time S] [--origins N] [--no-memory] [--json PATH]
                               [--fleet-sites N] [--workers W] [--fleet-rounds R]

    python -m benchmarks.crawl --scenarios fleet --no-memory   # the fleet alone (fleet.py)

The issue asks for 2,000 sites x 5 pages; on a 2-core machine one such
crawl takes 80-90 s (about 110 pages/s, server and crawler sharing a core),
so the three scenarios would take about 16 minutes. The default is therefore
800 sites x 5 pages (``--sites 2000`` gives the full size) with a 120 s cap
per crawl, which finishes in under 10 minutes; the size is printed with the
results.

Each crawl starts, in its own process, a Twisted web server on 127.0.0.1
(port 0, ``sites.SitesServer``) that plays ``--sites`` sites chosen by the
``Host`` header (``site<i>.bench``, resolved to 127.0.0.1 by ``sites.LoopbackResolver``
through ``TWISTED_DNS_RESOLVER``), each with a robots.txt and ``--pages``
pages that link to each other, and crawls them all from their home pages.
Scenarios:

1. fast: every robots.txt answers at once;
2. slow robots: 5% of the robots.txt answer after 10 s, 2% never answer;
3. many disallowed: 30% of each site's pages are disallowed.

Each scenario runs three variants: ``builtin`` (Scrapy's
``RobotsTxtMiddleware``, ``ROBOTSTXT_OBEY=True``), ``ours`` (the add-on,
``ROBOTSTXT_OBEY=True``) and ``obey-false`` (``ROBOTSTXT_OBEY=False``), with
the same settings otherwise (``_crawler.COMMON_SETTINGS``):
``CONCURRENT_REQUESTS=32``, ``CONCURRENT_REQUESTS_PER_DOMAIN=4``,
``DOWNLOAD_TIMEOUT=30``, no delays, ``LOG_LEVEL=WARNING``, telnet off.
Server and crawler share the process (and so a core). Reported per
variant: wall time (spider opened to closed), the time until 90% of its
pages were crawled, pages per second, peak RSS (``ru_maxrss`` of that
process), requests forbidden by robots.txt, and requests dropped because
robots.txt stayed unreachable (ours only).

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

``--scenarios fleet`` (or ``4``; not run by default) runs the fleet
scenario of ``fleet.py`` (a shared Redis store against a memory store per
crawler; ``--fleet-sites``, ``--workers``, ``--fleet-rounds``), and unless
``--no-memory`` the memory per cached origin of ``origins.py`` is measured
(``--origins``).

Targets: scenario 1, ours' wall time within 10% of obey-false; scenario 2,
the built-in at least 2.5x ours to reach 90% and ours within 25% of
obey-false to reach 90%; memory, median at most 2 KB per origin.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import fleet, origins
from benchmarks._common import (
    distribution_version,
    environment,
    progress,
    render_table,
)
from benchmarks._crawl_report import FLEET, SCENARIOS, crawl_targets, render_crawls
from benchmarks._crawler import (
    COMMON_SETTINGS,
    VARIANTS,
    Crawl,
    max_rss_bytes,
    run_worker,
    variant_settings,
)
from benchmarks._fleet_report import fleet_targets, render_fleet
from tests.helpers.docs_tables import recorded, write_recorded

FULL_SITES = 2000
"""The size the issue asks for (2,000 sites x 5 pages); too slow for a default run here."""
DEFAULT_SITES = 800
DEFAULT_PAGES = 5
QUICK_SITES = 200
DEFAULT_MAX_TIME = 120.0


# --------------------------------------------------------------------------
# One crawl (runs in a worker process)
# --------------------------------------------------------------------------


def build_plan(scenario: int, sites: int, pages: int) -> Any:
    from benchmarks.sites import SitePlan

    if scenario == 2:
        return SitePlan.build(sites, pages, slow_share=0.05, hang_share=0.02, slow_delay=10.0)
    if scenario == 3:
        return SitePlan.build(sites, pages, disallowed_share=0.30)
    return SitePlan.build(sites, pages)


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


def run_crawl(scenario: int, variant: str, sites: int, pages: int, max_time: float) -> CrawlResult:
    from benchmarks.sites import SitesServer

    plan = build_plan(scenario, sites, pages)
    crawl = Crawl(variant_settings(variant), follow=True)
    server = SitesServer(plan)  # after the crawler's reactor is installed
    crawl.start_urls = [server.url(i) for i in range(sites)]

    def result(capped: bool) -> CrawlResult:
        end = crawl.closed or time.time()
        start = crawl.opened or end
        wall = end - start
        times = [t - start for t in crawl.pages]
        expected = expected_pages(plan, variant)
        of = expected if capped else len(times)
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
            forbidden=crawl.stat("robotstxt/forbidden") + crawl.stat("robotrules/forbidden"),
            dropped=crawl.stat("robotrules/unreachable"),
            robots_requests=server.robots_requests,
            download_errors=crawl.stat("downloader/exception_count"),
            close_reason=",".join(crawl.reasons) or ("capped" if capped else "?"),
        )

    crawl.run(max_time, lambda: asdict(result(capped=True)))
    return result(capped=False)


def worker(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="crawl.py --worker")
    parser.add_argument("--scenario", type=int, default=1)
    parser.add_argument("--variant", choices=VARIANTS, default="ours")
    parser.add_argument("--sites", type=int, default=DEFAULT_SITES)
    parser.add_argument("--pages", type=int, default=DEFAULT_PAGES)
    parser.add_argument("--max-time", type=float, default=DEFAULT_MAX_TIME)
    args = parser.parse_args(argv)
    result = run_crawl(args.scenario, args.variant, args.sites, args.pages, args.max_time)
    print(json.dumps(asdict(result)), flush=True)
    return 0


# --------------------------------------------------------------------------
# Driving the crawls and reporting
# --------------------------------------------------------------------------


def run_scenarios(
    args: argparse.Namespace, scenarios: Sequence[int], failures: list[str]
) -> dict[int, dict[str, dict[str, Any] | None]]:
    results: dict[int, dict[str, dict[str, Any] | None]] = {}
    for scenario in scenarios:
        results[scenario] = {}
        for variant in VARIANTS:
            progress(f"scenario {scenario} ({SCENARIOS[scenario]}), {variant} ...")
            t0 = time.perf_counter()
            answer, err = run_worker(
                __file__,
                [
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
    return results


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark real crawls: built-in robots.txt middleware vs ours vs none."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {QUICK_SITES} sites, {origins.QUICK_ORIGINS:,} origins, "
        f"{fleet.QUICK_FLEET_SITES} fleet sites and {fleet.QUICK_FLEET_ROUNDS} fleet round "
        "unless given",
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
    fleet.add_arguments(parser)
    parser.add_argument(
        "--max-time",
        type=float,
        default=DEFAULT_MAX_TIME,
        help=f"stop a crawl after this many seconds (default {DEFAULT_MAX_TIME:.0f})",
    )
    parser.add_argument(
        "--origins",
        type=int,
        help=f"origins for the memory part (default {origins.DEFAULT_ORIGINS:,})",
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory-per-origin part")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="write the result tables into docs/benchmarks.rst, between their markers",
    )
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
        args.origins = origins.QUICK_ORIGINS if args.quick else origins.DEFAULT_ORIGINS
    fleet.settle_arguments(args, parser)
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
        print(f"error: {fleet.REDIS_MISSING}", file=sys.stderr)
        return 2
    env = environment()
    if crawl_list:
        print(
            f"crawl benchmark: {args.sites:,} sites x {args.pages} pages per crawl, "
            f"cap {args.max_time:.0f} s per crawl; scenarios {','.join(map(str, crawl_list))}"
        )
        if args.sites * args.pages < FULL_SITES * DEFAULT_PAGES:
            print(
                f"(reduced size: the full size is {FULL_SITES:,} sites x {DEFAULT_PAGES} "
                f"pages, --sites {FULL_SITES}, which takes about 16 minutes on 2 cores)"
            )
    if FLEET in args.scenario_list:
        print(fleet.describe(args))
    print(
        f"{env['python']} on {env['platform']} ({env['cpus']} CPUs); "
        f"Scrapy {distribution_version('scrapy')}, Twisted {distribution_version('twisted')}"
    )
    print()
    failures: list[str] = []
    results = run_scenarios(args, crawl_list, failures)
    if results:
        print(render_crawls(results))
        print()
    targets = crawl_targets(results)
    rounds: dict[str, list[dict[str, Any]]] = {}
    if FLEET in args.scenario_list:
        rounds, lost = fleet.run_rounds(
            args.fleet_sites,
            args.pages,
            args.workers,
            args.fleet_rounds,
            args.max_time,
            topology=args.topology,
            failover=args.failover,
        )
        failures += lost
        print(render_fleet(rounds, args))
        print()
        targets.extend(fleet_targets(rounds, args))
    memory: dict[str, Any] | None = None
    if not args.no_memory:
        memory, err = origins.measure(args.origins)
        if memory is None:
            failures.append(f"memory: {err}")
        else:
            print(origins.describe(memory))
            print()
            targets.append(origins.target(memory))
    if targets:
        rows = [[t["target"], t["value"], t["verdict"]] for t in targets]
        print(render_table(["target", "value", "verdict"], rows))
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
            "fleet": {"sites": args.fleet_sites, "workers": args.workers, "rounds": rounds}
            if rounds
            else None,
            "memory": memory,
            "targets": targets,
            "failures": failures,
            "seconds": elapsed,
            "command": "python -m benchmarks.crawl",
            "docs_tables": recorded(),
        }
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        progress(f"results written to {args.json}")
    if args.write_docs:
        write_recorded(" ".join(["python -m benchmarks.crawl", *argv]).replace(" --write-docs", ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
