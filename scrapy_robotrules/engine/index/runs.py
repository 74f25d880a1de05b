"""Needles of one repeated character, found from a path's runs (issue 12 bound, SPEC 4).

``a``, ``aa``... ``a`` * 64 are suffixes of one another: an automaton reports
every one of them at each ``a`` of a long enough run, up to 64 reports a
character, and a path of runs broken every few characters (so that no piece
of it repeats) floods it. Whether ``c`` * k occurs from some offset on only
needs the longest run of ``c`` there, and whether it ends the path, the run
that ends it: one regular-expression scan in C per path finds every run of
every such character, whatever the number of needles.
"""

from __future__ import annotations

import re
from itertools import compress
from operator import eq, itemgetter

__all__ = ["Runs", "unary_needles"]

_FIRST, _LAST = itemgetter(0), itemgetter(-1)


def unary_needles(needles: list[str]) -> dict[int, tuple[str, int]]:
    """Index -> (character, length) of the needles made of one repeated character.

    Only needles that start and end with the same character are looked at
    in Python: one in sixty-two of a file of random ones.
    """
    same_ends = map(eq, map(_FIRST, needles), map(_LAST, needles))
    found: dict[int, tuple[str, int]] = {}
    for i in compress(range(len(needles)), same_ends):
        needle = needles[i]
        if needle.count(needle[0]) == len(needle):
            found[i] = (needle[0], len(needle))
    return found


def run_finder(chars: set[str]) -> re.Pattern[str]:
    """A pattern finding each run of two or more of one of ``chars``, whole."""
    members = "".join(map(re.escape, sorted(chars)))
    return re.compile(f"(([{members}])\\2+)")


class Runs:
    """The runs of the characters of some needles in one path (one check).

    The longest run of each character is measured once per offset, by one
    scan: runs of two or more come whole from :func:`run_finder` (a run is
    matched at its first character, so the scan is linear), runs of one
    from ``in``.
    """

    __slots__ = ("_finder", "_longest", "_path")

    def __init__(self, path: str, finder: re.Pattern[str]) -> None:
        self._path = path
        self._finder = finder
        self._longest: dict[int, dict[str, int]] = {}

    def longest(self, char: str, offset: int) -> int:
        """The longest run of ``char`` in the path from ``offset`` on (0: none)."""
        path = self._path
        if offset and char not in path[:offset]:
            offset = 0  # every run of it is after the offset: the path's own
        runs = self._longest.get(offset)
        if runs is None:
            runs = self._longest[offset] = {}
            # Distinct runs only: a few hundred at most in any path (their
            # lengths add up to at most its length).
            for run in set(map(_FIRST, self._finder.findall(path, offset))):
                if len(run) > runs.get(run[0], 0):
                    runs[run[0]] = len(run)
        found = runs.get(char)
        if found is None:
            found = runs[char] = int(path.find(char, offset) >= 0)
        return found

    def trailing(self, char: str) -> int:
        """The length of the run of ``char`` that ends the path (0: none)."""
        path = self._path
        return len(path) - len(path.rstrip(char))
