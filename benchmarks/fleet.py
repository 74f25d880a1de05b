"""The fleet scenario: a shared Redis store against a memory store per crawler.

Usage::

    python -m benchmarks.fleet [--quick] [--fleet-sites N] [--pages P] [--workers W]
                               [--fleet-rounds R] [--max-time S] [--json PATH]

(``python -m benchmarks.crawl --scenarios fleet`` runs the same.)

It compares ``ROBOTRULES_STORE = "memory"`` (each crawler its own rules) with a
Redis store shared by a fleet of ``--workers`` (4) Scrapy processes crawling
``--fleet-sites`` (500) sites of ``--pages`` (5) pages, all robots.txt
answering at once and allowing every page. The sites server runs in a
process of its own (``sites.sites_process``), shared by the fleet, and counts
the robots.txt requests it answers (per site, too). The redis variant starts
a fresh ``redis-server`` on a free port of 127.0.0.1 (``--save ''
--appendonly no``, in a temporary directory) and kills it after the round;
without ``redis-server`` on the PATH the benchmark stops with an error. Each
crawler runs the add-on with the settings of ``_crawler.COMMON_SETTINGS``
(``CONCURRENT_REQUESTS=32`` each) and crawls its share of the pages, as a
shared queue would deal them out: the pages of all sites numbered in order,
crawler ``k`` gets those numbered ``k``, ``k + workers``, ..., as start
URLs, without following links. So no page is crawled twice, and (with at
least as many pages per site as crawlers) every crawler needs every site's
robots.txt: by design ``workers x sites`` fetches with memory, ``sites`` with
Redis, which the targets check. The crawlers start together (each reports
ready, then all get a go) and the fleet's wall time runs from the first
spider opened to the last closed. The variants run in ``--fleet-rounds`` (5)
rounds, alternating which goes first; per variant, the round with the median
pages/s is reported, with the range over all rounds. Reported: robots.txt
requests the server answered, the crawlers' summed
``robotrules/request_count``, ``store/hits``, ``fleet/waited``,
``store/errors``, pages crawled, wall time, the fleet's pages per second, and
redis/memory ratios. A default run (5 rounds of 4 x 500 sites x 5 pages per
variant) takes about 3 minutes on 2 cores; ``--quick`` runs 100 sites once.
With local sites a robots.txt costs as little as a page, and the fleet (4
crawlers, server and Redis on 2 cores) is CPU-bound: pages/s weighs the CPU
that the saved robots.txt fetches free against the CPU the store's work
takes, not the network time a real fleet would save.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import redis

from benchmarks._common import (
    REPO_ROOT,
    distribution_version,
    environment,
    module_command,
    progress,
    render_table,
)
from benchmarks._crawler import Crawl, max_rss_bytes, variant_settings
from benchmarks._fleet_report import FLEET_VARIANTS, fleet_targets, render_fleet, summarise_round
from benchmarks.sites import ServerError, SitePlan, host_name, log_tail, sites_process
from tests.helpers.docs_tables import recorded, write_recorded
from tests.helpers.redisserver import (  # the tests' Redis launchers
    ClusterServers,
    RedisServer,
    SentinelGroup,
)

DEFAULT_PAGES = 5
DEFAULT_MAX_TIME = 120.0
DEFAULT_FLEET_SITES = 500
QUICK_FLEET_SITES = 100
DEFAULT_WORKERS = 4
DEFAULT_FLEET_ROUNDS = 5
QUICK_FLEET_ROUNDS = 1


# --------------------------------------------------------------------------
# One crawler of the fleet (runs in a worker process)
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
    plan = SitePlan.build(sites, pages)
    crawl = Crawl(fleet_settings(store), follow=False, name="fleet")
    crawl.start_urls = [
        f"http://{host_name(site)}:{port}{path}" for site, path in fleet_share(plan, workers, index)
    ]

    def result(capped: bool) -> dict[str, Any]:
        now = time.time()
        kept = {
            key: value
            for key, value in crawl.stats().items()
            if isinstance(value, (int, float))
            and key.startswith(("robotrules/", "downloader/exception"))
        }
        return {
            "index": index,
            "start_urls": len(crawl.start_urls),
            "pages": len(crawl.pages),
            "opened": crawl.opened or now,
            "closed": crawl.closed or now,
            "capped": capped,
            "close_reason": ",".join(crawl.reasons) or ("capped" if capped else "?"),
            "max_rss": max_rss_bytes(),
            "stats": kept,
        }

    # Started (imports done, crawler built): wait for the whole fleet.
    print("ready", flush=True)
    sys.stdin.readline()
    crawl.run(max_time, lambda: result(capped=True))
    return result(capped=False)


def worker(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="fleet.py --worker")
    parser.add_argument("--sites", type=int, required=True)
    parser.add_argument("--pages", type=int, required=True)
    parser.add_argument("--max-time", type=float, default=DEFAULT_MAX_TIME)
    parser.add_argument("--store", default="memory")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--index", type=int, required=True)
    args = parser.parse_args(argv)
    answer = run_fleet_crawler(
        args.store,
        args.port,
        sites=args.sites,
        pages=args.pages,
        workers=args.workers,
        index=args.index,
        max_time=args.max_time,
    )
    print(json.dumps(answer), flush=True)
    return 0


# --------------------------------------------------------------------------
# Driving the fleet
# --------------------------------------------------------------------------


class FleetError(RuntimeError):
    """A fleet round could not run to its end (the message says why)."""


TOPOLOGIES = ("server", "cluster", "sentinel")
"""What the redis variant runs on: one server, a Redis Cluster, or a Sentinel group."""

NOT_ROUND_TRIPS = frozenset(
    {"info", "ping", "replconf", "publish", "subscribe", "psync", "sync", "client", "role"}
)
"""Commands a master serves its sentinels and replicas, not the crawlers."""


class StoreUnderTest:
    """The redis variant's store: its URL, its masters' command counts, and a failover."""

    def __init__(self, topology: str, directory: Path) -> None:
        self.topology = topology
        self.launcher: RedisServer | ClusterServers | SentinelGroup
        if topology == "cluster":
            self.launcher = ClusterServers(directory)
        elif topology == "sentinel":
            self.launcher = SentinelGroup(directory)
        else:
            directory.mkdir()
            self.launcher = RedisServer(directory)
        self.failed_over = False

    @property
    def url(self) -> str:
        return self.launcher.url

    def masters(self) -> list[RedisServer]:
        if isinstance(self.launcher, ClusterServers):
            return self.launcher.masters()
        if isinstance(self.launcher, SentinelGroup):
            return [self.launcher.master]
        return [self.launcher]

    def reset_counts(self) -> None:
        """Forget the commands served so far (the launcher's own readiness checks)."""
        for master in self.masters():
            client = redis.Redis(port=master.port)
            client.config_resetstat()
            client.close()

    def round_trips(self) -> int:
        """Commands the live masters served the crawlers since :meth:`reset_counts`."""
        total = 0
        for master in self.masters():
            client = redis.Redis(port=master.port)
            stats = client.info("commandstats")
            client.close()
            for name, figures in stats.items():
                command = name.removeprefix("cmdstat_").split("|")[0]
                if command not in NOT_ROUND_TRIPS:
                    total += int(figures["calls"])
        return total

    def records(self) -> int:
        """robots.txt records the store holds now."""
        found = 0
        for master in self.masters():
            client = redis.Redis(port=master.port)
            found += sum(1 for _ in client.scan_iter(match="robotrules:robots:*", count=1000))
            client.close()
        return found

    def fail_over(self) -> None:
        """Kill a master; a replica takes over (a cluster's promoted, a group's by sentinels)."""
        if isinstance(self.launcher, ClusterServers):
            self.launcher.fail_over(self.launcher.masters()[0])
        elif isinstance(self.launcher, SentinelGroup):
            self.launcher.fail_over()
        else:
            raise FleetError("--failover needs --topology cluster or sentinel")
        self.failed_over = True


@contextmanager
def redis_store(directory: Path, topology: str = "server") -> Iterator[StoreUnderTest]:
    """A fresh Redis ``topology`` on free ports of 127.0.0.1, killed on exit.

    Started as the tests start theirs (``tests/helpers/redisserver.py``).
    """
    if shutil.which("redis-server") is None:
        raise FleetError(REDIS_MISSING)
    store = StoreUnderTest(topology, directory)
    try:
        try:
            store.launcher.start()
        except RuntimeError as exc:
            raise FleetError(str(exc)) from None
        yield store
    finally:
        store.launcher.stop()


REDIS_MISSING = (
    "the fleet scenario needs redis-server (a real Redis, started on a free port): "
    "install it (apt-get install redis-server, brew install redis) or leave out "
    "--scenarios fleet"
)


def stop_process(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def run_fleet_round(
    variant: str,
    sites: int,
    pages: int,
    workers: int,
    max_time: float,
    *,
    topology: str = "server",
    failover: bool = False,
) -> dict[str, Any]:
    """One fleet crawl: the sites server, ``workers`` crawlers at once, Redis if ``variant``.

    ``failover``: a master is killed (and a replica takes over) once the
    store holds half the sites' robots.txt records, the crawlers still at work.
    """
    with tempfile.TemporaryDirectory(prefix="robotrules-fleet-") as tmp, ExitStack() as stack:
        directory = Path(tmp)

        def start(name: str, args: Sequence[str], *, stdin: bool) -> subprocess.Popen[str]:
            log = stack.enter_context((directory / f"{name}.log").open("w", encoding="utf-8"))
            proc = subprocess.Popen(
                module_command(__file__, "--worker", *args),
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
        shared: StoreUnderTest | None = None
        if variant == "redis":
            shared = stack.enter_context(redis_store(directory / "redis", topology))
            store = shared.url
        size = [f"--sites={sites}", f"--pages={pages}"]
        server = stack.enter_context(sites_process(sites, pages, directory / "server.log"))
        port = server.port
        crawlers = [
            start(
                f"worker{k}",
                [
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
        if shared is not None:
            shared.reset_counts()
        go = time.time()
        for proc in crawlers:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.close()
        deadline = time.monotonic() + max_time + 60
        if shared is not None and failover:
            while shared.records() < sites // 2 and any(p.poll() is None for p in crawlers):
                time.sleep(0.05)
            shared.fail_over()
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
        served = server.finish()
        trips = shared.round_trips() if shared is not None and not shared.failed_over else None
        logs = [(directory / f"worker{k}.log").read_text() for k in range(workers)]

    summary = summarise_round(
        variant, sites, pages, workers, answers=answers, served=served, span=ended - go
    )
    summary["topology"] = topology if variant == "redis" else "memory"
    summary["round_trips"] = trips
    summary["failed_over"] = failover and variant == "redis"
    summary["failover_warnings"] = sum(log.count("failed over") for log in logs)
    summary["fallback_warnings"] = sum(log.count("in-process memory store") for log in logs)
    return summary


def run_rounds(
    sites: int,
    pages: int,
    workers: int,
    rounds: int,
    max_time: float,
    *,
    topology: str = "server",
    failover: bool = False,
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """Every round of both variants, alternating which goes first; (rounds, failures)."""
    fleet: dict[str, list[dict[str, Any]]] = {variant: [] for variant in FLEET_VARIANTS}
    failures: list[str] = []
    for n in range(rounds):
        order = FLEET_VARIANTS if n % 2 == 0 else FLEET_VARIANTS[::-1]
        for variant in order:
            progress(
                f"fleet, {variant}, round {n + 1}/{rounds}: {workers} crawlers x {sites} sites ..."
            )
            try:
                answer = run_fleet_round(
                    variant, sites, pages, workers, max_time, topology=topology, failover=failover
                )
            except (FleetError, ServerError) as exc:
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
    return fleet, failures


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The fleet's options (``crawl.py`` takes them too)."""
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
        "--topology",
        choices=TOPOLOGIES,
        default="server",
        help="what the redis variant's store runs on: one redis-server (default), a Redis"
        " Cluster of three masters and three replicas, or a master, a replica and three"
        " sentinels",
    )
    parser.add_argument(
        "--failover",
        action="store_true",
        help="kill a master of the cluster or sentinel group mid-crawl (once the store holds"
        " half the robots.txt records); a replica takes over",
    )
    parser.add_argument(
        "--fleet-rounds",
        type=int,
        help=f"fleet crawls per variant, alternating (default {DEFAULT_FLEET_ROUNDS}, "
        f"{QUICK_FLEET_ROUNDS} with --quick); the median one is reported",
    )


def settle_arguments(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Fill in the defaults that depend on ``--quick``; refuse ``--failover`` without replicas."""
    if args.failover and args.topology == "server":
        parser.error("--failover needs --topology cluster or sentinel")
    if args.fleet_sites is None:
        args.fleet_sites = QUICK_FLEET_SITES if args.quick else DEFAULT_FLEET_SITES
    if args.fleet_rounds is None:
        args.fleet_rounds = QUICK_FLEET_ROUNDS if args.quick else DEFAULT_FLEET_ROUNDS


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return worker(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 sites, one round")
    parser.add_argument("--pages", type=int, default=DEFAULT_PAGES)
    parser.add_argument("--max-time", type=float, default=DEFAULT_MAX_TIME)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="write the result table into docs/benchmarks.rst, between its markers",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    settle_arguments(args, parser)
    if min(args.fleet_sites, args.pages, args.workers, args.fleet_rounds, args.max_time) <= 0:
        parser.error("--fleet-sites, --pages, --workers, --fleet-rounds, --max-time: positive")
    if shutil.which("redis-server") is None:
        print(f"error: {REDIS_MISSING}", file=sys.stderr)
        return 2
    env = environment()
    print(describe(args))
    print(
        f"{env['python']} on {env['platform']} ({env['cpus']} CPUs); "
        f"Scrapy {distribution_version('scrapy')}, Twisted {distribution_version('twisted')}"
    )
    print()
    fleet, failures = run_rounds(
        args.fleet_sites,
        args.pages,
        args.workers,
        args.fleet_rounds,
        args.max_time,
        topology=args.topology,
        failover=args.failover,
    )
    print(render_fleet(fleet, args))
    print()
    targets = fleet_targets(fleet, args)
    print(render_table(["target", "value", "verdict"], [list(t.values()) for t in targets]))
    for failure in failures:
        print(f"FAILED: {failure}")
    if args.json:
        data = {
            "environment": env,
            "args": vars(args),
            "rounds": fleet,
            "targets": targets,
            "command": "python -m benchmarks.fleet",
            "docs_tables": recorded(),
        }
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if args.write_docs:
        write_recorded(" ".join(["python -m benchmarks.fleet", *argv]).replace(" --write-docs", ""))
    return 1 if failures else 0


def describe(args: argparse.Namespace) -> str:
    return (
        f"fleet benchmark: {args.workers} crawler processes, {args.fleet_sites:,} sites x "
        f"{args.pages} pages, ROBOTRULES_STORE memory vs redis (on a {args.topology}"
        f"{', failing over mid-crawl' if args.failover else ''}), {args.fleet_rounds} "
        f"round{'' if args.fleet_rounds == 1 else 's'} each, "
        f"cap {args.max_time:.0f} s per crawl"
    )


if __name__ == "__main__":
    sys.exit(main())
