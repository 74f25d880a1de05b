"""``cpu_per_page.py``'s report: the variants' table, the ratio against its target, its intervals.

Its verdict and intervals come from ``_ratio.py``; the robots layers' own
shares are each variant's figure minus the floor's (``obey-false``), when the
floor was crawled; ``ours-robots``, when crawled, gets its own ratio to the
built-in, with no target. Garbage collection and connections, per crawl, are
shown beside (results saved before they were counted show none), with the
paired ratio of the CPU outside collections: a diagnostic, not the target.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from typing import Any

from benchmarks._common import render_table
from benchmarks._crawler import ROBOTS_ONLY, ROBOTS_ONLY_MEANS
from benchmarks._ratio import RESAMPLES, interval_of, paired_mean, paired_rounds, verdict

TARGET = 1.00
"""Ours' CPU per page over the built-in's, at most."""


def summary(results: list[dict[str, Any]]) -> dict[str, float]:
    """Median, min and max of ms per page over a variant's rounds."""
    figures = [r["ms_per_page"] for r in results if r["ms_per_page"] is not None]
    if not figures:
        return {}
    return {"median": statistics.median(figures), "min": min(figures), "max": max(figures)}


def _median_of(runs: list[dict[str, Any]], key: str, per_page: bool = False) -> float | None:
    """The median of ``key`` over the rounds that have it (per page: over their pages)."""
    values = [
        r[key] / r["pages"] if per_page else r[key]
        for r in runs
        if r.get(key) is not None and r["pages"]
    ]
    return statistics.median(values) if values else None


def report(results: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> list[str]:
    """The table, the ratio against its target and the robots layers' own shares."""
    headers = ["variant", "CPU/page", "range", "CPU", "pages", "robots.txt", "GC/page", "conns"]
    rows: list[Sequence[str]] = []
    medians: dict[str, float] = {}
    for variant in args.variants:
        runs = results[variant]
        figures = summary(runs)
        if not figures:
            rows.append([variant, "failed", *[""] * (len(headers) - 2)])
            continue
        medians[variant] = figures["median"]
        gc_cpu = _median_of(runs, "gc_cpu", per_page=True)
        connections = _median_of(runs, "connections")
        rows.append(
            [
                variant,
                f"{figures['median']:.2f} ms",
                f"{figures['min']:.2f}-{figures['max']:.2f}",
                f"{statistics.median(r['cpu'] for r in runs):.2f} s",
                ", ".join(sorted({f"{r['pages']:,}" for r in runs})),
                ", ".join(sorted({f"{r['robots_requests']:,}" for r in runs})),
                "" if gc_cpu is None else f"{1e3 * gc_cpu:.2f} ms",
                "" if connections is None else f"{connections:,.0f}",
            ]
        )
    lines = [render_table(headers, rows)]
    ours, builtin, floor = (medians.get(v) for v in ("ours", "builtin", "obey-false"))
    if ours is not None and builtin is not None:
        value = ours / builtin
        pairs = paired_rounds(results)
        interval = interval_of(pairs)
        lines.append(
            f"ours / built-in CPU per page: {value:.3f} (target <= {TARGET:.2f}: "
            f"{verdict(interval, TARGET)}); built-in {builtin:.2f} ms, ours {ours:.2f} ms"
        )
        if interval is not None:
            low, high = interval
            lines.append(
                f"95% interval of that ratio (rounds resampled {RESAMPLES:,} times): "
                f"{low:.3f}-{high:.3f}"
            )
        lines.extend(_paired(pairs, "ours"))
        outside = _outside_collections(results)
        if outside is not None:
            geometric, around = outside
            lines.append(
                "outside garbage collection (a diagnostic, not the target): paired ours /"
                f" built-in geometric mean {geometric:.3f}"
                + ("" if around is None else f" (95% interval {around[0]:.3f}-{around[1]:.3f})")
            )
        alone = medians.get(ROBOTS_ONLY)
        if alone is not None:
            lines.append(
                f"{ROBOTS_ONLY} / built-in CPU per page: {alone / builtin:.3f}"
                f" ({ROBOTS_ONLY_MEANS}); {ROBOTS_ONLY} {alone:.2f} ms"
            )
            lines.extend(_paired(paired_rounds(results, ROBOTS_ONLY), ROBOTS_ONLY))
        if floor is not None:
            mine, theirs = ours - floor, builtin - floor
            share = f"{mine / theirs:.2f}x" if theirs > 0 else "n/a"
            lines.append(
                f"robots layer's own CPU per page (variant - obey-false {floor:.2f} ms): "
                f"ours {mine:.2f} ms, built-in {theirs:.2f} ms ({share})"
            )
    lines.append(
        f"medians of {args.rounds} round{'s' if args.rounds != 1 else ''}; "
        f"{args.sites:,} sites x {args.pages} pages, each page linking to every page of its site"
        + (f"; every answer after {args.latency:g} ms" if args.latency else "")
    )
    return lines


def _outside_collections(
    results: dict[str, list[dict[str, Any]]],
) -> tuple[float, tuple[float, float] | None] | None:
    """The paired ours / built-in ratio of each round's CPU per page outside collections."""

    def ms_per_page(r: dict[str, Any]) -> float | None:
        if r.get("gc_cpu") is None or not r["pages"]:
            return None
        value: float = 1e3 * (r["cpu"] - r["gc_cpu"]) / r["pages"]
        return value

    return paired_mean(paired_rounds(results, figure=ms_per_page))


def _paired(pairs: list[tuple[float, float]], mine: str) -> list[str]:
    """The rounds' own ``mine`` / built-in ratios: median, range, geometric mean, interval."""
    mean = paired_mean(pairs)
    if mean is None:
        return []
    paired = [ours / theirs for ours, theirs in pairs]
    geometric, around = mean
    return [
        f"paired: the rounds' own {mine} / built-in ratios, median"
        f" {statistics.median(paired):.3f}"
        f" (range {min(paired):.3f}-{max(paired):.3f}; steadier on a busy machine, where"
        " load drifts between rounds more than within one); geometric mean"
        f" {geometric:.3f}"
        + ("" if around is None else f" (95% interval {around[0]:.3f}-{around[1]:.3f})")
    ]
