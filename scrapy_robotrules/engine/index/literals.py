"""Many wildcard rules found by the literal each needs, in one pass over the path (issue 12 bound).

Trying every rule costs rules times path length: 24,380 rules
``Disallow: /*<8 letters>`` took 29 ms a check at 2,083 characters and over
a second at 100,000. Every rule with a wildcard needs its longest literal
piece (its needle) somewhere in the path (SPEC 4). An Aho-Corasick
automaton finds all needles present in one pass; only their rules are
tried, in the rank order their precedence strategy gives (SPEC 5).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from itertools import repeat
from operator import itemgetter

from ahocorasick_rs import AhoCorasick, Implementation

from ..patterns import Pattern
from ..precedence import PrecedenceStrategy, code_allows, code_line
from .wildcards import Wild, scan_checked, wild_entry

__all__ = ["AUTOMATON_MIN", "Literals"]

AUTOMATON_MIN = 64
"""From this many wildcard rules with a literal after a ``*``, they are found by
an automaton; fewer cost less scanned one by one."""
# The automaton reads a long path in pieces of this many characters, so that
# a flood of reports is noticed before it fills memory; past twice the path
# length plus this many reports, it gives up (see Literals).
_CHUNK = 4096
_REPORTS = 10_000
_NEEDLE = 64
# Rules of a large wildcard set read again from the file and kept at once.
_CACHED = 4096
_FIRST = itemgetter(0)


class Literals:
    """Wildcard rules with a needle, found by an automaton.

    The rules themselves are not kept: only each one's code (line and
    verdict), in an array. A rule whose needle is found is read again from
    the file (``pattern_at``), and kept in a small bounded cache.

    An automaton reports every needle ending at every position: needles that
    are suffixes of one another (``a``, ``aa``, ``aaa``...) against a path of
    ``a`` report many times per character. Past a budget of reports, every
    rule is read and tried one by one instead, as without the automaton.
    """

    __slots__ = (
        "_all",
        "_automaton",
        "_cache",
        "_codes",
        "_first",
        "_next",
        "_overlap",
        "_pattern_at",
        "_strategy",
    )

    def __init__(
        self,
        strategy: PrecedenceStrategy,
        needles: list[str],
        codes: array[int],
        pattern_at: Callable[[int], Pattern],
    ) -> None:
        self._strategy = strategy
        self._codes = codes
        self._pattern_at = pattern_at
        self._cache: dict[int, Wild] = {}
        self._all: list[Wild] | None = None
        # Any part of a needle will do: found, its rules are checked in
        # full. A bound on needle length bounds how many needles can end at
        # one position, so a flood of reports shows within a chunk.
        # Needle i stands for rule i; rules sharing a needle are chained
        # through ``_next`` (rule -> next rule with its needle, or -1).
        short = [needle[:_NEEDLE] for needle in needles]
        ids = dict(zip(reversed(short), range(len(short) - 1, -1, -1), strict=True))
        following = array("i", repeat(-1, len(short)))
        if len(ids) < len(short):
            for i, needle in enumerate(short):
                first = ids[needle]
                if first != i:
                    following[i] = following[first]
                    following[first] = i
        self._next = following
        unique = list(ids)
        self._overlap = max(map(len, unique)) - 1
        self._automaton = AhoCorasick(
            unique, store_patterns=False, implementation=Implementation.ContiguousNFA
        )
        # The automaton numbers needles in ``unique`` order: map to rules.
        self._first = array("i", ids.values())

    def _wild(self, rule: int) -> Wild:
        entry = self._cache.get(rule)
        if entry is None:
            entry = self._wild_uncached(rule)
            if len(self._cache) >= _CACHED:
                self._cache.clear()
            self._cache[rule] = entry
        return entry

    def _wild_uncached(self, rule: int) -> Wild:
        code = self._codes[rule]
        line = code_line(code)
        return wild_entry(self._strategy, line, code_allows(code), self._pattern_at(line))

    def present(self, path: str) -> set[int] | None:
        """Ids of the needles in ``path``, or ``None`` when they are reported too often."""
        budget = 2 * len(path) + _REPORTS
        found: set[int] = set()
        find = self._automaton.find_matches_as_indexes
        overlap = self._overlap
        start = 0
        while True:
            matches = find(path[start : start + _CHUNK + overlap], overlapping=True)
            budget -= len(matches)
            if budget < 0:
                return None
            found.update(map(_FIRST, matches))
            start += _CHUNK
            if start + overlap >= len(path):
                return found

    def _everything(self) -> list[Wild]:
        if self._all is None:
            self._all = sorted(map(self._wild_uncached, range(len(self._codes))), key=_FIRST)
        return self._all

    def scan(self, path: str, best_rank: int, best: int) -> tuple[int, int]:
        """The best-ranked matching rule, if it ranks above ``best``."""
        found = self.present(path)
        if found is None:
            return scan_checked(self._everything(), path, best_rank, best)
        if not found:
            return best_rank, best
        candidates = []
        first, following = self._first, self._next
        for needle in found:
            rule = first[needle]
            while rule >= 0:
                candidates.append(self._wild(rule))
                rule = following[rule]
        candidates.sort(key=_FIRST)
        return scan_checked(candidates, path, best_rank, best)
