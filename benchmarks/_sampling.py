"""Where a crawl's CPU time goes, sampled: this package's code, the built-in middleware's, the rest.

``cpu_per_page.py --attribute N`` uses it. Callgrind counts instructions,
not time, and this machine's hardware counters are out of reach (a VM), so
time is attributed by sampling instead: ``ITIMER_PROF`` interrupts the
crawler after each slice of its own CPU time (as often as the kernel's tick
allows), and the Python stack then running is classified. A sample is the
package's when a frame of ``scrapy_robotrules`` is found, walking outwards,
before any frame of Scrapy's crawl machinery (engine, scheduler, middleware
managers, downloader, reactor): what the package calls (w3lib, Scrapy's
``Request.meta``, the standard library) counts as its own, what it hands
back to Scrapy (``engine.crawl`` after the gate) does not. The built-in
middleware's samples are found the same way. Garbage collection is timed
apart (``gc.callbacks``), since whichever frame allocates pays for it.
"""

from __future__ import annotations

import gc
import signal
import statistics
import time
from collections import Counter
from types import FrameType
from typing import Any

from benchmarks._common import render_table
from benchmarks._profiles import PACKAGE

BUILTIN = ("scrapy/downloadermiddlewares/robotstxt.py", "scrapy/robotstxt.py", "/protego")
"""Scrapy's RobotsTxtMiddleware, its parser plug-ins and Protego."""
MACHINERY = (
    "scrapy/core/",
    "scrapy/pqueues",
    "scrapy/dupefilters",
    "scrapy/middleware.py",
    "scrapy/signalmanager",
    "scrapy/utils/asyncio",
    "scrapy/utils/defer",
    "twisted/internet/",
    "cpu_per_page.py",
)
"""Frames past which a sample is the crawl's, not the caller's (the spider included)."""
INTERVAL = 0.001
"""Seconds of CPU between samples asked for; the kernel's tick may make it longer."""


class CpuSampler:
    """Samples this process's CPU time by owner while started; times its garbage collections."""

    def __init__(self) -> None:
        self.samples = 0
        self.owners: Counter[str] = Counter()
        self.functions: Counter[str] = Counter()
        self.gc_seconds = 0.0
        self._gc_started = 0.0

    def start(self) -> None:
        gc.callbacks.append(self._gc)
        signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, INTERVAL, INTERVAL)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, signal.SIG_DFL)
        gc.callbacks.remove(self._gc)

    def result(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "package": self.owners["package"],
            "builtin": self.owners["builtin"],
            "gc_seconds": self.gc_seconds,
            "functions": dict(self.functions),
        }

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:  # not a collection that began before start()
            self.gc_seconds += time.perf_counter() - self._gc_started
            self._gc_started = 0.0

    def _sample(self, signum: int, frame: FrameType | None) -> None:
        self.samples += 1
        while frame is not None:
            path = frame.f_code.co_filename.replace("\\", "/")
            if f"/{PACKAGE}/" in path:
                self.owners["package"] += 1
                name = path[path.rfind(f"/{PACKAGE}/") + 1 :]
                self.functions[f"{name} {frame.f_code.co_name}"] += 1
                return
            if any(part in path for part in BUILTIN):
                self.owners["builtin"] += 1
                return
            if any(part in path for part in MACHINERY):
                return
            frame = frame.f_back


def attribution_report(sampled: dict[str, list[dict[str, Any]]], top: int) -> list[str]:
    """Per variant, medians of the sampled rounds: a page's CPU by owner, then ours' top functions.

    A share of samples times the crawl's CPU per page gives milliseconds;
    garbage collection is its measured time over the pages (its samples also
    fall in whichever owner allocated, so the columns overlap by that much).
    """
    rows: list[list[str]] = []
    for variant, answers in sampled.items():
        runs = [r for r in answers if r.get("attribution") and r["attribution"]["samples"]]
        if not runs:
            continue
        total = statistics.median(r["ms_per_page"] for r in runs)
        collect = statistics.median(1e3 * r["attribution"]["gc_seconds"] / r["pages"] for r in runs)
        package, builtin = _per_page(runs, "package"), _per_page(runs, "builtin")
        rows.append(
            [
                variant,
                f"{total:.3f}",
                f"{package:.3f}",
                f"{builtin:.3f}",
                f"{collect:.3f}",
                f"{total - package - builtin - collect:.3f}",
                f"{statistics.median(r['attribution']['samples'] for r in runs):,.0f}",
            ]
        )
    headers = ["variant", "ms/page", "package", "built-in", "GC", "rest", "samples"]
    rounds = max(map(len, sampled.values()))
    lines = [
        f"sampled CPU per page by owner (ms, medians of {rounds} round{'s' if rounds != 1 else ''}"
        "; the sampler's own cost included):",
        render_table(headers, rows),
    ]
    functions: Counter[str] = Counter()
    ours = [r["attribution"] for r in sampled.get("ours", []) if r.get("attribution")]
    for attribution in ours:
        functions.update(attribution["functions"])
    if ours:
        samples = sum(a["samples"] for a in ours)
        lines.append(f"ours' samples in {PACKAGE}, by the function of the package sampled:")
        lines.append(
            render_table(
                ["function", "share of all samples"],
                [[name, f"{count / samples:.2%}"] for name, count in functions.most_common(top)],
            )
        )
    return lines


def _per_page(runs: list[dict[str, Any]], owner: str) -> float:
    """Median over ``runs`` of ``owner``'s share of the samples times the CPU per page."""
    return float(
        statistics.median(
            r["ms_per_page"] * r["attribution"][owner] / r["attribution"]["samples"] for r in runs
        )
    )
