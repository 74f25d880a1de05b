"""Periodic needles, found from a path's periodic runs (SPEC 4; bounded on hostile files).

``a``, ``aa``... ``a`` * 64, or ``abab``, ``ababa``... are suffixes of one
another: an automaton reports every one of them at each character of a long
enough run of ``a`` (of ``ab``), up to 64 reports a character, and a path of
runs broken every few characters (so that no piece of it repeats) floods it.
A needle of smallest period ``p`` (its root: its first ``p`` characters) at
most half its length occurs exactly where a run of period ``p`` holds it in
phase: whether it occurs after some offset only needs, per root, the
longest run in phase with it there. One regular-expression scan in C per
period finds every run of that period, whatever the number of needles.

Needles of one repeated character (period 1) are common and cheap to spot:
they are found when the index is built. Others are looked for only once a
path floods the automaton (see :class:`.Literals`).
"""

from __future__ import annotations

import re
from operator import itemgetter

__all__ = ["Runs", "finder", "periodic_needles", "unary_needles"]

_FIRST = itemgetter(0)
_BRANCHES = 8


def unary_needles(needles: list[str]) -> dict[int, tuple[str, int]]:
    """Index -> (character, length) of the needles made of one repeated character.

    Only needles that start and end with the same character are looked at
    in Python: one in sixty-two of a file of random ones.
    """
    found: dict[int, tuple[str, int]] = {}
    for i, needle in enumerate(needles):
        if needle[0] == needle[-1] and needle.count(needle[0]) == len(needle):
            found[i] = (needle[0], len(needle))
    return found


def periodic_needles(needles: list[str]) -> dict[int, tuple[str, int]]:
    """Index -> (root, length) of the needles of a period from 2 to half their length.

    Such a needle's last two characters occur one period earlier: only the
    needles where they occur earlier at all are looked at in Python.
    """
    found: dict[int, tuple[str, int]] = {}
    for i, needle in enumerate(needles):
        if needle[-2:] not in needle[:-1]:
            continue
        size = len(needle)
        for period in range(2, size // 2 + 1):
            if needle[period:] == needle[:-period]:
                if needle[0] * period != needle[:period]:  # else of period 1
                    found[i] = (needle[:period], size)
                break
    return found


def finder(period: int, shortest: dict[str, int] | None = None) -> re.Pattern[str]:
    """A pattern finding the runs of ``period``.

    Period 1: each run of a character of ``shortest`` at least as long as
    its value there (the shortest needle of it but those of one), whole;
    ``shortest`` is not read for longer periods. Longer: the run's units but
    the last (matched ahead, so that a run starting inside it is found
    next), its first unit's characters, and the part of a unit after the
    last one. Each run is matched from its first character: the scan is
    linear.
    """
    if period == 1:
        # A few characters: a branch each (``aaa+``: one is a literal the
        # scan skips to) and no group, so that each run comes as a string,
        # not a tuple. Many: one back-reference.
        shortest = shortest or {}
        if len(shortest) <= _BRANCHES:
            branches = (re.escape(char * size) + "+" for char, size in sorted(shortest.items()))
            return re.compile("|".join(branches) or "(?!)")
        return re.compile(f"(([{''.join(map(re.escape, sorted(shortest)))}])\\2+)")
    unit = "".join(f"\\{k}" for k in range(2, period + 2))
    partial = ""
    for k in range(period, 1, -1):
        partial = f"\\{k}(?:{partial})?" if partial else f"\\{k}"
    return re.compile(f"({'(.)' * period}(?:{unit})*)(?={unit}((?:{partial})?))")


class Runs:
    """The periodic runs of one path, measured once per period and offset (one check).

    ``roots``: per period, the roots of the needles of that period.
    """

    __slots__ = ("_finders", "_longest", "_path", "_roots")

    def __init__(self, path: str, roots: dict[int, set[str]], finders: dict[int, re.Pattern[str]]):
        self._path = path
        self._roots = roots
        self._finders = finders
        self._longest: dict[tuple[int, int], dict[str, int]] = {}

    def longest(self, root: str, offset: int) -> int:
        """The longest run in phase with ``root`` in the path from ``offset`` on (0: none).

        For a root of one character, a lone one counts (1), and runs shorter
        than its shortest needle but those of one as 1; for a longer root,
        runs of two units or more only.
        """
        path, period = self._path, len(root)
        if offset and set(root).isdisjoint(path[:offset]):
            offset = 0  # no run of it reaches before the offset: the path's own
        runs = self._longest.get((period, offset))
        if runs is None:
            runs = self._longest[period, offset] = self._measure(period, offset)
        found = runs.get(root)
        if found is None:
            found = runs[root] = int(period == 1 and path.find(root, offset) >= 0)
        return found

    def _measure(self, period: int, offset: int) -> dict[str, int]:
        """Per root of ``period``, its longest run in phase from ``offset`` on."""
        runs: dict[str, int] = {}
        found = self._finders[period].findall(self._path, offset)
        if period == 1:
            # Distinct runs only: a few hundred at most (their lengths add up
            # to at most the path's).
            for run in set(map(_FIRST, found) if self._finders[1].groups else found):
                if len(run) > runs.get(run[0], 0):
                    runs[run[0]] = len(run)
            return runs
        roots = self._roots[period]
        for match in set(found):
            head, partial = match[0], match[-1]
            unit = head[:period]
            size = len(head) + period + len(partial)
            # Each rotation of the unit is in phase one character later.
            for shift in range(period):
                root = unit[shift:] + unit[:shift]
                if root in roots and size - shift > runs.get(root, 0):
                    runs[root] = size - shift
        return runs
