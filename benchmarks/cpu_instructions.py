"""CPU instructions per crawled page (callgrind): cpu_per_page.py's crawl, without the noise.

Usage::

    python -m benchmarks.cpu_instructions [--sites N] [--pages P] [--jobs J]
                                          [--variants V ...] [--json PATH]

Needs ``valgrind``. The crawl is ``cpu_per_page.py``'s (its worker, its
settings: ``--sites`` (300) sites of ``--pages`` (10) pages, the site server
in a process of its own), run once per variant under ``valgrind
--tool=callgrind``, which counts the instructions the crawler's process
executes. Time on a shared machine varies by 5 to 20% from run to run; an
instruction count varies only with the order in which responses arrive (what
waits, what runs on which turn of the loop, when the garbage collector runs):
at this size, within 0.5% for this package across runs and machines, and by
up to 7% for the built-in middleware, whose requests wait for robots.txt
inside Scrapy's downloader for as long as the order of events makes them.

The process's count holds Python's start, the imports and the exit too: a
worker that imports what the crawl workers import and stops (``idle``) is
counted as well, and each variant's crawl is its count minus that one. Per
page is that over the pages crawled (the crawl worker's two questions to the
site server for its connection count, before and after the crawl, are the
same small work in every variant). Under callgrind a crawl runs about 30
times slower: 300 sites of 10 pages take about 4 minutes a variant (``--jobs
2`` runs two at once, on a machine with the cores for them).

``--cache-sim`` also simulates the caches and branch predictor (about 1.5
times slower): a layer that ran fewer instructions but missed the caches or
mispredicted more could still take longer. It reports those per page and
KCachegrind's cycle estimate, ``Ir + 10 Bm + 10 L1m + 100 LLm``.

Target: ours <= built-in, as in ``cpu_per_page.py``, whose
``ours-robots`` variant (robots.txt alone) ``--variants`` may name here too.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks._common import (
    distribution_version,
    environment,
    finish,
    progress,
    render_table,
)
from benchmarks._crawler import ALL_VARIANTS, ROBOTS_ONLY, ROBOTS_ONLY_MEANS, VARIANTS, run_worker

TARGET = 1.00
IDLE = "idle"


def worker(argv: Sequence[str]) -> int:
    """In the process callgrind counts: a crawl (as cpu_per_page.py's), or only the imports."""
    from benchmarks import cpu_per_page

    if argv[0] == IDLE:
        cpu_per_page.preload()
        print(json.dumps({"variant": IDLE, "pages": 0}), flush=True)
        return 0
    return cpu_per_page.worker(argv)


def counted(
    args: Sequence[str], out: Path, timeout: float, cache_sim: bool, script: str = __file__
) -> tuple[dict[str, int] | None, dict[str, Any], str]:
    """Run ``script``'s worker (this one's by default) under callgrind.

    Returns its event totals, the worker's answer, and what went wrong if anything did.
    """
    simulate = ["--cache-sim=yes", "--branch-sim=yes"] if cache_sim else []
    callgrind = ["valgrind", "--tool=callgrind", *simulate, f"--callgrind-out-file={out}"]
    answer, err = run_worker(script, args, timeout, under=callgrind)
    if answer is None:
        return None, {}, err
    totals = events(out.read_text(encoding="utf-8", errors="replace")) if out.exists() else None
    if totals is None:
        return None, {}, f"no totals in callgrind's output file\n{err}"
    return totals, answer, ""


def events(profile: str) -> dict[str, int] | None:
    """A callgrind profile's totals by event name (``Ir``, and ``D1mr`` ... with --cache-sim)."""
    names: list[str] = []
    for line in profile.splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith(("summary:", "totals:")) and names:
            return dict(zip(names, (int(n) for n in line.split()[1:]), strict=False))
    return None


def simulated(totals: dict[str, int]) -> dict[str, int]:
    """Cache misses, branch mispredictions and KCachegrind's cycle estimate of event totals."""
    l1 = sum(totals.get(e, 0) for e in ("I1mr", "D1mr", "D1mw"))
    ll = sum(totals.get(e, 0) for e in ("ILmr", "DLmr", "DLmw"))
    bm = totals.get("Bcm", 0) + totals.get("Bim", 0)
    return {"L1m": l1, "LLm": ll, "Bm": bm, "CEst": totals["Ir"] + 10 * bm + 10 * l1 + 100 * ll}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=300)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=1, help="variants counted at once")
    parser.add_argument("--variants", nargs="+", choices=ALL_VARIANTS, default=list(VARIANTS))
    parser.add_argument("--max-time", type=float, default=3600.0, help="seconds per crawl")
    parser.add_argument(
        "--cache-sim", action="store_true", help="also simulate caches and branch prediction"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if min(args.sites, args.pages, args.jobs, args.max_time) <= 0:
        parser.error("--sites, --pages, --jobs and --max-time must be positive")
    return args


def report(
    totals: dict[str, dict[str, int]], pages: dict[str, int], args: argparse.Namespace
) -> list[str]:
    """The table, and ours over the built-in against the target."""
    kinds = ["Ir", "L1m", "LLm", "Bm", "CEst"] if args.cache_sim else ["Ir"]
    figures = {v: {**t, **simulated(t)} if args.cache_sim else t for v, t in totals.items()}
    idle = figures[IDLE]
    crawl = {v: {k: f[k] - idle[k] for k in kinds} for v, f in figures.items() if v != IDLE}
    per_page = {v: {k: c[k] / pages[v] for k in kinds} for v, c in crawl.items() if pages.get(v)}
    rows = [
        [v, f"{crawl[v]['Ir'] / 1e9:.3f} G", f"{pages[v]:,}"]
        + [f"{per_page[v][k] / 1e6:.3f} M" for k in kinds]
        for v in args.variants
        if v in per_page
    ]
    names = {"Ir": "per page", "L1m": "L1 misses", "LLm": "LL misses"}
    names |= {"Bm": "mispredicted", "CEst": "cycle est."}
    headers = ["variant", "crawl instructions", "pages"] + [names[k] for k in kinds]
    lines = [render_table(headers, rows)]
    lines.append(f"idle worker (Python, imports, exit; subtracted): {idle['Ir'] / 1e9:.3f} G")
    ours, builtin, floor = (per_page.get(v) for v in ("ours", "builtin", "obey-false"))
    if ours is not None and builtin is not None:
        value = ours["Ir"] / builtin["Ir"]
        verdict = "PASS" if value <= TARGET else "FAIL"
        lines.append(
            f"ours / built-in instructions per page: {value:.3f} (target <= 1.00: {verdict})"
        )
        if args.cache_sim:
            ratios = ", ".join(f"{names[k]} {ours[k] / builtin[k]:.3f}" for k in kinds[1:])
            lines.append(f"ours / built-in, per page: {ratios}")
        alone = per_page.get(ROBOTS_ONLY)
        if alone is not None:
            lines.append(
                f"{ROBOTS_ONLY} / built-in instructions per page: {alone['Ir'] / builtin['Ir']:.3f}"
                f" ({ROBOTS_ONLY_MEANS})"
            )
        if floor is not None:
            mine, theirs = ours["Ir"] - floor["Ir"], builtin["Ir"] - floor["Ir"]
            lines.append(
                f"robots layer's own per page (variant - obey-false): ours {mine / 1e3:,.0f} k,"
                f" built-in {theirs / 1e3:,.0f} k instructions"
            )
    lines.append(f"{args.sites:,} sites x {args.pages} pages, one crawl per variant")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return worker(argv[1:])
    args = parse_args(argv)
    if shutil.which("valgrind") is None:
        print("error: valgrind is not installed (Debian: apt install valgrind)", file=sys.stderr)
        return 2
    from benchmarks.sites import ServerError, sites_process

    env = environment()
    print(
        f"CPU instructions per crawled page (callgrind): {args.sites:,} sites x {args.pages}"
        f" pages; {env['python']}, Scrapy {distribution_version('scrapy')}"
    )
    totals: dict[str, dict[str, int]] = {}
    pages: dict[str, int] = {}
    failures: list[str] = []
    size = [f"--sites={args.sites}", f"--pages={args.pages}"]
    with tempfile.TemporaryDirectory(prefix="robotrules-instr-") as tmp:
        try:
            with sites_process(args.sites, args.pages, Path(tmp) / "server.log") as server:
                jobs = [(IDLE, [IDLE])] + [
                    (v, [v, f"--port={server.port}", *size]) for v in args.variants
                ]

                def run(
                    job: tuple[str, list[str]],
                ) -> tuple[str, dict[str, int] | None, dict[str, Any], str]:
                    name, worker_args = job
                    progress(f"{name} under callgrind ...")
                    out = Path(tmp) / f"{name}.callgrind"
                    total, answer, err = counted(worker_args, out, args.max_time, args.cache_sim)
                    return name, total, answer, err

                with ThreadPoolExecutor(args.jobs) as pool:
                    for name, total, answer, err in pool.map(run, jobs):
                        if total is None:
                            failures.append(f"{name}: {err}")
                            continue
                        totals[name] = total
                        pages[name] = int(answer.get("pages", 0))
                        progress(f"  {name}: {total['Ir'] / 1e9:.3f} G, {pages[name]:,} pages")
        except ServerError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    lines = report(totals, pages, args) if IDLE in totals else []
    print("\n".join(lines))
    data = {"environment": env, "args": vars(args), "totals": totals, "pages": pages}
    return finish(failures, args.json, data)


if __name__ == "__main__":
    sys.exit(main())
