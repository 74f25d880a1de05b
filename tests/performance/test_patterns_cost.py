"""Matching a pattern costs a scan per piece, whatever its stars and the path.

Counted, never timed: the scans made of a path (``find``, ``startswith``,
``endswith``), and the pieces a pattern of a million stars keeps. What
patterns match is ``tests/engine/robots/test_patterns.py``'s to check.
"""

from __future__ import annotations

import pytest

from scrapy_robotrules.engine.robots.patterns import Pattern

pytestmark = pytest.mark.performance


class CountingPath(str):
    """A path that counts the scans made of it."""

    scans = 0

    def find(self, *args: object) -> int:
        CountingPath.scans += 1
        return super().find(*args)  # type: ignore[arg-type]

    def startswith(self, *args: object) -> bool:
        CountingPath.scans += 1
        return super().startswith(*args)  # type: ignore[arg-type]

    def endswith(self, *args: object) -> bool:
        CountingPath.scans += 1
        return super().endswith(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("stars", [4, 12, 40])
@pytest.mark.parametrize("length", [1_000, 100_000])
def test_matching_never_backtracks(stars: int, length: int) -> None:
    """One scan per piece, whatever the path: no backtracking blow-up (CVE-2026-55520).

    Counted, not timed: a backtracking matcher makes a number of attempts
    that grows with the path and the stars; this one makes pieces + 2 scans.
    """
    pattern = Pattern("/" + "*a" * stars + "*b")
    CountingPath.scans = 0
    assert not pattern.matches(CountingPath("/" + "a" * length))
    assert CountingPath.scans <= stars + 3
    CountingPath.scans = 0
    assert pattern.matches(CountingPath("/" + "a" * length + "b"))
    assert CountingPath.scans <= stars + 3


def test_a_million_stars_cost_nothing_to_match() -> None:
    pattern = Pattern("/" + "*" * 1_000_000 + "x")
    assert pattern.middle == ("x",)
    assert pattern.matches("/abcx")
    assert pattern.priority == 1 + 1_000_000 + 1
