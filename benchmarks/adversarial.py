"""Adversarial patterns and URLs: the worst time per check, and a 500 KiB file of wildcard rules.

A script, not a test: ``python -m benchmarks.adversarial [--length N]``.

Each case is a robots.txt built to make matchers slow (many ``*``, long
literal runs, ``$`` variants) checked against a path of ``--length``
characters (100,000 by default). The time per check is the best of several
repeats, each after another question (a file keeps its last answer, which
a check asked again at once would time), on a file whose groups are
already read (the first check of a file, which reads its rules, is shown
apart: the best of three, each on a freshly parsed file). Targets: no
check slower than 1 ms at 100,000 characters; the 500 KiB file of wildcard rules (several
stars each) parsed in under 0.5 s, and its first check (which reads its
rules) at most 50 ms, as for the files below.

Then files of about 500 KiB made of many wildcard rules (distinct
literals, shared prefixes, ``$``, escapes, non-ASCII, and literals nested as
suffixes of one another), in each precedence mode. Targets: the first check
(which reads the group; it builds the automaton too, unless the file's
literals are of few lengths and the path short: see ``index.windows``) at
most 50 ms; then at most
2 ms a check on a 2,083-character path and 20 ms on a 100,000-character
one; memory held per file, after both checks, at most 4 times its size.
Then 10, 100 and 1,000 checks of distinct 2,083-character paths in a row on the
distinct literals, as the engine makes them (the dict of literals until the
automaton would have cost less, then the automaton), beside what the dict
only and the automaton only would cost (``_rental``).

Then paths built against each of those files, at both lengths: a path made
of the file's own literals (it finds thousands of its rules) and, for the
nested literals, a run of ``a`` and runs of ``a`` broken by two random
characters every 442 or 64 (no piece of the path repeats, yet each ``a``
holds the needles made of ``a`` alone). The nested literals come again with
the rules ``/*a`` ... ``/*a{64}`` besides (64 needles nested in every run),
and with ``/*ab``, ``/*aba`` ... ``/*(ab){32}`` against runs of ``ab``
broken the same way (periodic needles of period 2), each file cut to stay
within ``ROBOTRULES_MAX_SIZE``. Each repeat checks another path, so nothing
read for one is reused; same targets.
``--paths-only`` prints this table alone.

Memory is shown three ways. ``python``: Python's objects one file holds
(tracemalloc). ``RSS 4``: the process's resident memory per origin, four
origins parsed and checked in a fresh process (Linux only); it counts what
native code holds, so each file's automaton, which the process-wide cache
(``index.automata``, 64 MiB by default) keeps for the last files used.
``RSS/origin``: the same process goes on to 64 origins, and the figure is
the growth of resident memory from the 32nd to the 64th, per origin. By
then the cache is full and has turned over at least twice, so each new
origin's automaton takes an evicted one's place (and the allocator's
holes are refilled): what is left is what an origin holds for good, which
is what a crawler of many such sites pays per origin. The 64 MiB of
automata are a fixed cost of the process, not of an origin; ``RSS 4``
shows what the last few files cost while they are cached. The verdict
takes the larger of ``python`` and ``RSS/origin``.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from benchmarks._common import REPO_ROOT, module_command
from benchmarks._hostile import (
    FAMILIES,
    LONG_PATH,
    NESTED_MORE,
    SHORT_PATH,
    adversarial_paths,
    cases,
    family,
    family_paths,
    path_family,
    wildcard_file,
)
from benchmarks._rental import short_checks
from scrapy_robotrules import Precedence, RobotsTxt

CHECK_TARGET = 1e-3
PARSE_TARGET = 0.5
FIRST_TARGET = 50e-3
SHORT_TARGET = 2e-3
LONG_TARGET = 20e-3
MEMORY_TARGET = 4.0  # times the file's size
MODES: tuple[Precedence, ...] = ("most-specific", "first-match", "allow-first")


def best_time(call: Callable[[], object], repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def check_time(
    robots: RobotsTxt, path: str, mode: Precedence = "most-specific", repeat: int = 7
) -> float:
    """The best time of a check of ``path``, each after another question (untimed).

    A parsed file keeps its last answer, and the URL module the last path it
    read: a check asked again at once would time those, not a check.
    """
    other = "/" if path != "/" else "/x"
    best = float("inf")
    for _ in range(repeat):
        robots.allowed(other, "bot", mode)
        started = time.perf_counter()
        robots.allowed(path, "bot", mode)
        best = min(best, time.perf_counter() - started)
    return best


def first_check(body: bytes, mode: Precedence = "most-specific", repeat: int = 3) -> float:
    """The best time of the first check (which reads the rules), each on a fresh parse."""
    best = float("inf")
    for _ in range(repeat):
        robots = RobotsTxt.parse(body)
        gc.collect()
        started = time.perf_counter()
        robots.allowed("/index.html", "bot", mode)
        best = min(best, time.perf_counter() - started)
    return best


def run_paths() -> bool:
    """Print checks on paths built against each family; whether every one passed."""
    header = f"{'path built against the file':<48} {'mode':<14} {'2,083 ch':>9} {'100k ch':>9}"
    print(f"\n{header}  verdict")
    print(f"{'targets':<48} {'':<14} {'<= 2 ms':>9} {'<= 20 ms':>9}")
    passed = True
    for name in (*FAMILIES, *NESTED_MORE):
        body = path_family(name)
        for mode in MODES:
            robots = RobotsTxt.parse(body)
            robots.allowed("/index.html", "bot", mode)
            short = adversarial_paths(name, body, SHORT_PATH, 7)
            long = adversarial_paths(name, body, LONG_PATH, 3)
            for kind in short:
                # Each repeat checks another path: nothing read for one is reused.
                times = []
                for paths, repeat in ((short[kind], 7), (long[kind], 3)):
                    each = [paths[i % len(paths)] for i in range(repeat)]
                    times.append(min(check_time(robots, path, mode, 1) for path in each))
                ok = times[0] <= SHORT_TARGET and times[1] <= LONG_TARGET
                passed = passed and ok
                label = f"{name}: {kind}"
                print(
                    f"{label:<48} {mode:<14} {times[0] * 1e3:>6.2f} ms {times[1] * 1e3:>6.2f} ms  "
                    f"{'PASS' if ok else 'FAIL'}"
                )
    return passed


def held_bytes(body: bytes, mode: Precedence, paths: dict[int, str]) -> int:
    """Memory one parsed file holds after a check on each path (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        robots = RobotsTxt.parse(body)
        for path in paths.values():
            robots.allowed(path, "bot", mode)
        gc.collect()
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


_STATM = Path("/proc/self/statm")
_ORIGINS = 4
_SLOPE_FROM, _SLOPE_TO = 32, 64


def resident() -> int:
    """Resident bytes of this process (Linux), or -1."""
    try:
        return int(_STATM.read_text().split()[1]) * 4096
    except (OSError, IndexError, ValueError):
        return -1


def rss_worker(name: str, mode: Precedence) -> tuple[int, int]:
    """In a fresh process: resident bytes per origin, over the first ``_ORIGINS``, and
    from the ``_SLOPE_FROM``-th to the ``_SLOPE_TO``-th (see the module's docstring)."""
    body = family(name)
    paths = family_paths()
    RobotsTxt.parse(b"User-agent: *\nDisallow: /x\n").allowed("/x", "bot", mode)
    gc.collect()
    marks = [resident()]
    held = []
    for _ in range(_SLOPE_TO):
        robots = RobotsTxt.parse(body)
        for path in paths.values():
            robots.allowed(path, "bot", mode)
        held.append(robots)
        gc.collect()
        marks.append(resident())
    if min(marks) < 0:
        return -1, -1
    first = (marks[_ORIGINS] - marks[0]) // _ORIGINS
    slope = (marks[_SLOPE_TO] - marks[_SLOPE_FROM]) // (_SLOPE_TO - _SLOPE_FROM)
    return first, slope


def resident_per_origin(name: str, mode: Precedence) -> tuple[int, int]:
    """:func:`rss_worker` run in a subprocess; -1 when it cannot be measured."""
    done = subprocess.run(
        module_command(__file__, "--rss", name, mode),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        first, slope = done.stdout.strip().splitlines()[-1].split()
        return int(first), int(slope)
    except (IndexError, ValueError):
        return -1, -1


def run_families() -> bool:
    """Print the hostile families against their targets; whether every one passed."""
    paths = family_paths()
    print(
        f"\n{'file of wildcard rules (~500 KiB)':<34} {'mode':<14} {'first':>9} "
        f"{'2,083 ch':>9} {'100k ch':>9} {'python':>7} {'RSS 4':>7} {'RSS/origin':>10}  verdict"
    )
    print(
        f"{'targets':<34} {'':<14} {'<= 50 ms':>9} {'<= 2 ms':>9} {'<= 20 ms':>9} "
        f"{'<= 4x':>7} {'':>7} {'<= 4x':>10}"
    )
    passed = True
    for name in FAMILIES:
        body = family(name)
        rules = body.count(b"\n") - 1
        for mode in MODES:
            first = first_check(body, mode)
            robots = RobotsTxt.parse(body)
            robots.allowed("/index.html", "bot", mode)
            short = check_time(robots, paths[SHORT_PATH], mode)
            long = check_time(robots, paths[LONG_PATH], mode, 3)
            held = held_bytes(body, mode, paths) / len(body)
            rss_first, rss = resident_per_origin(name, mode)
            first_ratio = rss_first / len(body) if rss_first >= 0 else float("nan")
            rss_ratio = rss / len(body) if rss >= 0 else float("nan")
            ok = (
                first <= FIRST_TARGET
                and short <= SHORT_TARGET
                and long <= LONG_TARGET
                and held <= MEMORY_TARGET
                and not rss_ratio > MEMORY_TARGET
            )
            passed = passed and ok
            label = f"{name} ({rules:,})"
            print(
                f"{label:<34} {mode:<14} {first * 1e3:>6.1f} ms {short * 1e3:>6.2f} ms "
                f"{long * 1e3:>6.2f} ms {held:>6.1f}x {first_ratio:>6.1f}x {rss_ratio:>9.1f}x  "
                f"{'PASS' if ok else 'FAIL'}"
            )
    print(f"\nchecks of {SHORT_PATH:,} characters in a row on the distinct literals (best of 3):")
    for count in (10, 100, 1000):
        times = short_checks(family("distinct literals"), count, SHORT_PATH)
        print(f"  {count:>5,}: " + "; ".join(f"{way} {t * 1e3:.0f} ms" for way, t in times.items()))
    return passed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=100_000, help="path length (characters)")
    parser.add_argument(
        "--no-families", action="store_true", help="skip the files of many wildcard rules"
    )
    parser.add_argument(
        "--paths-only", action="store_true", help="only the paths built against each family"
    )
    parser.add_argument("--rss", nargs=2, metavar=("FAMILY", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss:
        print(*rss_worker(*args.rss))
        return 0
    if args.paths_only:
        run_paths()
        return 0
    length = args.length
    print(f"path length {length:,} characters; times are the best of 7 checks\n")
    print(f"{'case':<34} {'first check':>12} {'per check':>12}  target")
    worst = 0.0
    for name, value, path in cases(length):
        robots = RobotsTxt.parse(f"User-agent: *\nDisallow: {value}\n")
        started = time.perf_counter()
        robots.allowed(path, "bot")
        first = time.perf_counter() - started
        per_check = check_time(robots, path)
        worst = max(worst, per_check)
        verdict = "PASS" if per_check <= CHECK_TARGET else "FAIL"
        print(f"{name:<34} {first * 1e3:>9.3f} ms {per_check * 1e3:>9.3f} ms  {verdict}")
    print(f"\nworst check: {worst * 1e3:.3f} ms (target {CHECK_TARGET * 1e3:.0f} ms)\n")

    body = wildcard_file(500 * 1024)
    parse = best_time(lambda: RobotsTxt.parse(body), repeat=3)
    first = first_check(body)
    robots = RobotsTxt.parse(body)
    rules = body.count(b"\n") - 1
    robots.allowed("/index.html", "bot")
    short = check_time(robots, "/catalog/x1/y1/item.php")
    long_path = "/" + "x" * length
    long = check_time(robots, long_path, repeat=3)
    verdict = "PASS" if parse <= PARSE_TARGET else "FAIL"
    print(f"500 KiB file of {rules:,} wildcard rules for one agent:")
    print(f"  parse                         {parse * 1e3:9.1f} ms  (target 500 ms)  {verdict}")
    first_verdict = "PASS" if first <= FIRST_TARGET else "FAIL"
    print(
        f"  first check (reads the rules) {first * 1e3:9.1f} ms  "
        f"(target {FIRST_TARGET * 1e3:.0f} ms) {first_verdict}"
    )
    print(f"  check, short path             {short * 1e3:9.3f} ms")
    print(f"  check, {length:,}-char path    {long * 1e3:9.1f} ms")
    if not args.no_families:
        run_families()
        run_paths()
    return 0


if __name__ == "__main__":
    sys.exit(main())
