"""Adversarial patterns and URLs: the worst time per check, and a 500 KiB file of wildcard rules.

A script, not a test: ``python benchmarks/adversarial.py [--length N]``.

Each case is a robots.txt built to make matchers slow (many ``*``, long
literal runs, ``$`` variants) checked against a path of ``--length``
characters (100,000 by default). The time per check is the best of several
repeats, on a file whose groups are already read (the first check of a
file, which reads its rules, is shown apart). Targets: no check slower than
1 ms at 100,000 characters; the 500 KiB file of wildcard rules parsed in
under 0.5 s.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrapy_robotrules import RobotsTxt

CHECK_TARGET = 1e-3
PARSE_TARGET = 0.5


def best_time(call: Callable[[], object], repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def cases(length: int) -> list[tuple[str, str, str]]:
    """(name, rule value, path)."""
    a_path = "/" + "a" * length
    ab_path = "/" + "ab" * (length // 2)
    return [
        ("13 stars, no match", "/*a*a*a*a*a*a*a*a*a*a*a*a*b", a_path),
        ("1,000 stars, no match", "/" + "*a" * 1000 + "*b", a_path),
        ("1,000 stars, match", "/" + "*a" * 1000 + "*b", a_path + "b"),
        ("literal run of 5,000", "/" + "a" * 5000 + "*b", a_path),
        ("star then literal run of 5,000", "/*" + "a" * 4999 + "b", a_path),
        ("anchored piece, no match", "/*a$", ab_path),
        ("anchored long piece", "/*" + "ab" * 200 + "$", ab_path),
        ("anchored after stars", "/*a*b*a*b*a$", ab_path),
        ("plain prefix", "/" + "a" * 1000, a_path),
        ("percent-encoded path", "/%41%42", "/" + "%41" * (length // 3)),
        ("non-ASCII path", "/é", "/" + "é" * (length // 2)),
        # Paths that alternate what normalisation keeps and what it changes:
        # a normaliser that works run by run makes a call per run.
        ("stray % and spaces", "/*x$", "/" + "% " * (length // 2)),
        ("kept and encoded alternating", "/*x$", "/" + "a " * (length // 2)),
        ("escapes and kept alternating", "/*x$", "/" + "a%2F" * (length // 4)),
        ("two kinds of escapes alternating", "/*x$", "/" + "%41%2F" * (length // 6)),
        ("non-ASCII and ASCII alternating", "/*x$", "/" + "aé" * (length // 3)),
    ]


def wildcard_file(size: int) -> bytes:
    """A robots.txt of about ``size`` bytes: one group, nothing but wildcard rules."""
    lines = [b"User-agent: *"]
    total = len(lines[0]) + 1
    i = 0
    while total < size:
        line = f"Disallow: /*x{i}*y{i % 97}*.php$".encode()
        lines.append(line)
        total += len(line) + 1
        i += 1
    return b"\n".join(lines) + b"\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=100_000, help="path length (characters)")
    args = parser.parse_args()
    length = args.length
    print(f"path length {length:,} characters; times are the best of 7 checks\n")
    print(f"{'case':<34} {'first check':>12} {'per check':>12}  target")
    worst = 0.0
    for name, value, path in cases(length):
        robots = RobotsTxt.parse(f"User-agent: *\nDisallow: {value}\n")
        started = time.perf_counter()
        robots.allowed(path, "bot")
        first = time.perf_counter() - started
        per_check = best_time(lambda r=robots, p=path: r.allowed(p, "bot"))  # type: ignore[misc]
        worst = max(worst, per_check)
        verdict = "PASS" if per_check <= CHECK_TARGET else "FAIL"
        print(f"{name:<34} {first * 1e3:>9.3f} ms {per_check * 1e3:>9.3f} ms  {verdict}")
    print(f"\nworst check: {worst * 1e3:.3f} ms (target {CHECK_TARGET * 1e3:.0f} ms)\n")

    body = wildcard_file(500 * 1024)
    parse = best_time(lambda: RobotsTxt.parse(body), repeat=3)
    robots = RobotsTxt.parse(body)
    rules = body.count(b"\n") - 1
    started = time.perf_counter()
    robots.allowed("/index.html", "bot")
    first = time.perf_counter() - started
    short = best_time(lambda: robots.allowed("/catalog/x1/y1/item.php", "bot"))
    long_path = "/" + "x" * length
    long = best_time(lambda: robots.allowed(long_path, "bot"), repeat=3)
    verdict = "PASS" if parse <= PARSE_TARGET else "FAIL"
    print(f"500 KiB file of {rules:,} wildcard rules for one agent:")
    print(f"  parse                         {parse * 1e3:9.1f} ms  (target 500 ms) {verdict}")
    print(f"  first check (reads the rules) {first * 1e3:9.1f} ms")
    print(f"  check, short path             {short * 1e3:9.3f} ms")
    print(f"  check, {length:,}-char path    {long * 1e3:9.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
