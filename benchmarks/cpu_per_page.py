"""CPU per crawled page: this package's crawl layer against Scrapy's built-in middleware.

Usage::

    python -m benchmarks.cpu_per_page [--sites N] [--pages P] [--rounds R]
                                      [--latency MS] [--variants V ...]
                                      [--profile FILE] [--top N] [--json PATH]

One run: a sites server in a process of its own (``sites.py``: ``--sites``
(300) local sites of ``--pages`` (10) pages that all link to each other,
every robots.txt allowing every page), and one fresh crawler process per
crawl, which follows every link from each home page (so each page offers
``--pages`` requests, all but the first of each duplicates). The server
answers at once, the crawler's fastest case; ``--latency MS`` makes it send
every answer, robots.txt and pages, after MS milliseconds, as across a
network. Only the crawler's CPU is counted: user plus system time of
its process (``resource.getrusage``) from just before the crawl starts until
the reactor has stopped, the modules of all variants imported beforehand.
Per page is that CPU over the pages crawled. Each crawl also reports the
CPU of its garbage collections (``_crawler.GcClock``) and the connections
the sites server accepted from it (a request on a new connection costs the
crawler more CPU than one on a kept connection).

Variants, with the same settings otherwise (``_crawler.COMMON_SETTINGS``):
``builtin`` (Scrapy's ``RobotsTxtMiddleware``), ``ours`` (the add-on) and
``obey-false`` (``ROBOTSTXT_OBEY=False``, the floor). They take turns in each
of ``--rounds`` (3) rounds, the order rotating, and each variant's median is
reported. ``--variants builtin ours`` leaves the floor out: half again as
many rounds in the same time, for a long run that only compares the two.
``ours-robots`` (named in ``--variants`` only) is the add-on with its
page-level and usage middlewares off: robots.txt alone, the built-in's whole
job, so that its ratio to the built-in tells the robots layer's cost from
that of reading every page's own rules.
Target: ours per page <= built-in per page (ratio at most 1.00).
Also printed: a bootstrap 95% interval of that ratio (whole rounds
resampled), and the median and geometric mean of each round's own ratio
(ours over the built-in run next to it), which a machine whose load drifts
moves less, the mean with its own bootstrap interval. The verdict follows the
first interval (``_ratio.py``): PASS when all of it is at most 1.00, FAIL
when all of it is above, else not shown. The robots layer's own share is
each variant's figure minus the floor's.

``--profile FILE`` then crawls once more with ``ours`` under cProfile (the
crawler's main thread) and writes its statistics to FILE, and the built-in's
to ``FILE.builtin``, and prints the functions of ``scrapy_robotrules`` with
the most time of their own, and the Python functions (of any code) called
most often more with ours than with the built-in. ``--attribute N`` runs N
more rounds with the crawler's CPU time sampled (``_sampling.py``) and
prints, per variant, how much of a page's CPU went to this package's own
code, to the built-in middleware's, to garbage collection and to the rest of
the crawl. Profiled and sampled crawls are not part of the figures. A
default run takes about two minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import distribution_version, environment, finish, progress, render_table
from benchmarks._cpu_report import report
from benchmarks._crawler import (
    ALL_VARIANTS,
    HREF,
    VARIANTS,
    GcClock,
    connections_accepted,
    cpu_seconds,
    max_rss_bytes,
    run_worker,
    variant_settings,
)
from benchmarks._profiles import PACKAGE, extra_calls, hot_spots
from benchmarks._sampling import CpuSampler, attribution_report

DEFAULT_SITES = 300
DEFAULT_PAGES = 10
DEFAULT_ROUNDS = 3


# --------------------------------------------------------------------------
# One crawl (runs in a worker process)
# --------------------------------------------------------------------------


def preload() -> None:
    """Import what every variant may load lazily, so that no variant's CPU counts imports.

    That is also every component Scrapy's default settings name: about 280
    modules a crawl would otherwise import inside the timed window, the same
    in every variant, and no crawling.
    """
    import encodings.utf_8_sig  # noqa: F401  (the built-in's decoding of robots.txt)

    import protego  # noqa: F401  (the built-in's parser)
    import scrapy.downloadermiddlewares.robotstxt
    import scrapy.robotstxt  # noqa: F401
    from scrapy.settings import default_settings
    from scrapy.utils.misc import load_object

    for name in dir(default_settings):
        value = getattr(default_settings, name)
        paths = [*value, *value.values()] if isinstance(value, dict) else [value]
        for path in paths:
            if isinstance(path, str) and path.startswith("scrapy.") and path.count(".") > 1:
                try:
                    load_object(path)
                except Exception:  # an optional dependency missing
                    continue
    import scrapy_robotrules

    for name in ("Addon", "RobotRulesMiddleware", "RobotRulesExtension", "RobotParser"):
        getattr(scrapy_robotrules, name)


def crawl(
    variant: str,
    port: int,
    sites: int,
    pages: int,
    profile: str | None,
    *,
    attribute: bool = False,
) -> dict[str, Any]:
    """Crawl every site from its home page, following links; what it cost this process."""
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.http import Response
    from scrapy.settings.default_settings import TWISTED_REACTOR
    from scrapy.utils.reactor import install_reactor

    from benchmarks.sites import host_name

    preload()
    process = CrawlerProcess(variant_settings(variant))
    install_reactor(TWISTED_REACTOR)
    start_urls = [f"http://{host_name(site)}:{port}/" for site in range(sites)]
    crawled = [0]
    clock: dict[str, float] = {}

    class CpuSpider(scrapy.Spider):
        name = "cpu"

        async def start(self) -> Any:
            for url in start_urls:
                yield scrapy.Request(url)

        def parse(self, response: Response, **kwargs: Any) -> Any:
            crawled[0] += 1
            for href in HREF.findall(response.body):
                yield response.follow(href.decode())

    crawler = process.create_crawler(CpuSpider)

    def opened(spider: scrapy.Spider) -> None:
        clock["opened"] = time.monotonic()

    def closed(spider: scrapy.Spider, reason: str) -> None:
        clock["closed"] = time.monotonic()

    crawler.signals.connect(opened, signal=signals.spider_opened)
    crawler.signals.connect(closed, signal=signals.spider_closed)
    profiler = cProfile.Profile() if profile else None
    sampler = CpuSampler() if attribute else None
    gc_clock = GcClock()
    accepted = connections_accepted(port)
    before = cpu_seconds()
    gc_clock.start()
    if profiler is not None:
        profiler.enable()
    if sampler is not None:
        sampler.start()
    process.crawl(crawler)
    process.start()
    if sampler is not None:
        sampler.stop()
    if profiler is not None:
        profiler.disable()
    gc_clock.stop()
    cpu = cpu_seconds() - before
    # The crawl's connections: the second count's own one is not the crawl's.
    connections = connections_accepted(port) - accepted - 1
    if profiler is not None and profile:
        profiler.dump_stats(profile)
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    return {
        "variant": variant,
        "pages": crawled[0],
        "cpu": cpu,
        "ms_per_page": 1e3 * cpu / crawled[0] if crawled[0] else None,
        "gc_cpu": gc_clock.seconds,
        "gc_full": gc_clock.full,
        "connections": connections,
        "wall": clock.get("closed", 0.0) - clock.get("opened", 0.0),
        "robots_requests": int(
            stats.get("robotstxt/request_count", 0) + stats.get("robotrules/request_count", 0)
        ),
        "max_rss": max_rss_bytes(),
        "attribution": None if sampler is None else sampler.result(),
    }


def worker(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="cpu_per_page.py --worker")
    parser.add_argument("variant", choices=ALL_VARIANTS)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--sites", type=int, required=True)
    parser.add_argument("--pages", type=int, required=True)
    parser.add_argument("--profile")
    parser.add_argument("--attribute", action="store_true")
    args = parser.parse_args(argv)
    answer = crawl(
        args.variant, args.port, args.sites, args.pages, args.profile, attribute=args.attribute
    )
    print(json.dumps(answer), flush=True)
    return 0


# --------------------------------------------------------------------------
# Driving the crawls and reporting
# --------------------------------------------------------------------------


def _rounds(
    label: str,
    count: int,
    worker_args: list[str],
    max_time: float,
    failures: list[str],
    *,
    variants: Sequence[str],
) -> dict[str, list[dict[str, Any]]]:
    """``count`` rounds in which ``variants`` take turns, the order rotating; answers by variant."""
    answers: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    order = list(variants)
    for n in range(count):
        turn = n % len(order)
        for variant in order[turn:] + order[:turn]:
            progress(f"{label} {n + 1}/{count}, {variant} ...")
            answer, err = run_worker(__file__, [variant, *worker_args], max_time)
            if answer is None:
                failures.append(f"{label} {n + 1} {variant}: {err}")
                progress(f"  failed: {err}")
                continue
            answer["round"] = n
            answers[variant].append(answer)
            progress(
                f"  {answer['pages']} pages, {answer['cpu']:.2f} s CPU, "
                f"{answer['ms_per_page']:.2f} ms/page, wall {answer['wall']:.1f} s"
            )
    return answers


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=DEFAULT_SITES)
    parser.add_argument("--pages", type=int, default=DEFAULT_PAGES)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument(
        "--latency", type=float, default=0.0, metavar="MS", help="ms before every answer (0)"
    )
    parser.add_argument("--max-time", type=float, default=300.0, help="seconds per crawl")
    parser.add_argument("--profile", metavar="FILE", help="profile ours (and FILE.builtin)")
    parser.add_argument("--top", type=int, default=20, help="hot spots to print (default 20)")
    parser.add_argument(
        "--attribute", type=int, default=0, metavar="N", help="N more rounds, CPU time sampled"
    )
    parser.add_argument(
        "--variants",
        nargs="+",
        choices=ALL_VARIANTS,
        default=list(VARIANTS),
        help="which variants take turns (default: all three)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if min(args.sites, args.pages, args.rounds, args.max_time, args.top) <= 0:
        parser.error("--sites, --pages, --rounds, --max-time and --top must be positive")
    if args.attribute < 0 or args.latency < 0:
        parser.error("--attribute and --latency must not be negative")
    if not {"builtin", "ours"} <= set(args.variants):
        parser.error("--variants must name builtin and ours (the ratio is theirs)")
    args.variants = [v for v in ALL_VARIANTS if v in args.variants]  # the usual order, once each
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return worker(argv[1:])
    args = parse_args(argv)
    from benchmarks.sites import ServerError, sites_process

    env = environment()
    print(
        f"CPU per crawled page: {args.sites:,} sites x {args.pages} pages, {args.rounds} rounds"
        f"{f', every answer after {args.latency:g} ms' if args.latency else ''}; "
        f"{env['python']} ({env['cpus']} CPUs), Scrapy {distribution_version('scrapy')}, "
        f"Twisted {distribution_version('twisted')}"
    )
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="robotrules-cpu-") as tmp:
        try:
            with sites_process(
                args.sites, args.pages, Path(tmp) / "server.log", latency=args.latency / 1e3
            ) as server:
                port = f"--port={server.port}"
                worker_args = [port, f"--sites={args.sites}", f"--pages={args.pages}"]
                results = _rounds(
                    "round",
                    args.rounds,
                    worker_args,
                    args.max_time,
                    failures,
                    variants=args.variants,
                )
                sampled = _rounds(
                    "sampled round",
                    args.attribute,
                    [*worker_args, "--attribute"],
                    args.max_time,
                    failures,
                    variants=args.variants,
                )
                if args.profile:
                    for variant, path in (
                        ("ours", args.profile),
                        ("builtin", f"{args.profile}.builtin"),
                    ):
                        progress(f"profiling {variant} into {path} ...")
                        _, err = run_worker(
                            __file__, [variant, *worker_args, f"--profile={path}"], args.max_time
                        )
                        if not Path(path).exists():
                            failures.append(f"profile {variant}: {err}")
                served = server.finish()
        except ServerError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    print()
    lines = report(results, args)
    print("\n".join(lines))
    print(
        f"server: {served['page_requests']:,} pages and {served['robots_requests']:,} "
        "robots.txt served in all"
    )
    if args.attribute:
        print()
        print("\n".join(attribution_report(sampled, args.top)))
    if args.profile and Path(args.profile).exists():
        for path in (args.profile, f"{args.profile}.builtin"):
            if not Path(path).exists():
                continue
            total, own, rows = hot_spots(path, args.top)
            print()
            print(
                f"{path}: {total:.2f} s profiled, {own:.2f} s ({own / total:.0%}) in "
                f"{PACKAGE}'s own code"
            )
            if rows:
                print(render_table(["function", "calls", "own ms", "cum ms"], rows))
        if Path(f"{args.profile}.builtin").exists():
            print()
            print("called more often with ours than with the built-in (own ms: the difference)")
            rows = extra_calls(args.profile, f"{args.profile}.builtin", args.top)
            print(render_table(["function", "ours", "built-in", "own ms"], rows))
    data = {"environment": env, "args": vars(args), "results": results, "report": lines}
    if args.attribute:
        data["sampled"] = sampled
    return finish(failures, args.json, data)


if __name__ == "__main__":
    sys.exit(main())
