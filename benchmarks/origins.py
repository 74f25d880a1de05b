"""Memory per cached origin: many origins held in one ``RobotRules`` (engine only, no crawl).

Usage::

    python -m benchmarks.origins [--origins N] [--json PATH]

(``python -m benchmarks.crawl`` runs it too, unless ``--no-memory``.)

``--origins`` (100,000) origins are filled with the corpus's robots.txt files
in turn (each body copied inside the traced region, so an engine that kept
its input would be charged for it), in a fresh process. Each origin's own
increase of tracemalloc's traced memory is recorded; the median over the
origins is reported, with p10, p90 and the mean (which a few large files
dominate: the corpus's mean file is 8 times its median one). Target: median
at most 2 KB per origin.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import fmt_bytes, load_corpus, progress
from benchmarks._crawler import run_worker

DEFAULT_ORIGINS = 100_000
QUICK_ORIGINS = 10_000
MEMORY_TARGET = 2048


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


def measure(origins: int) -> tuple[dict[str, Any] | None, str]:
    """Measure in a fresh process; (the figures or None, what went wrong)."""
    progress(f"memory per cached origin ({origins:,} origins) ...")
    return run_worker(__file__, [f"--origins={origins}"], timeout=900)


def describe(memory: dict[str, Any]) -> str:
    return (
        f"memory per cached origin: {memory['held']:,} origins in one RobotRules "
        f"({memory['files']:,} corpus files in turn, from {memory['corpus']}), "
        "each origin measured: "
        f"median {memory['median']:.0f} B/origin "
        f"(p10 {memory['p10']:.0f}, p90 {memory['p90']:.0f}, "
        f"overall mean {memory['mean']:.0f}); filled in {memory['seconds']:.1f} s "
        "under tracemalloc"
    )


def target(memory: dict[str, Any]) -> dict[str, str]:
    value = memory["median"]
    return {
        "target": f"memory: median <= {fmt_bytes(MEMORY_TARGET)} per origin",
        "value": f"{value:.0f} B",
        "verdict": "PASS" if value <= MEMORY_TARGET else "FAIL",
    }


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    worker = bool(argv) and argv[0] == "--worker"
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--origins", type=int, default=DEFAULT_ORIGINS)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv[1:] if worker else argv)
    if args.origins <= 0:
        parser.error("--origins must be positive")
    if worker:
        print(json.dumps(measure_origins(args.origins)), flush=True)
        return 0
    memory, err = measure(args.origins)
    if memory is None:
        print(f"FAILED: {err}")
        return 1
    print(describe(memory))
    verdict = target(memory)
    print(f"{verdict['target']}: {verdict['value']} ({verdict['verdict']})")
    if args.json:
        Path(args.json).write_text(json.dumps(memory, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
