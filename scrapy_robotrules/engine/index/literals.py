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
from .automata import AUTOMATON_BYTES_PER_CHAR, automata
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
# Rules of a large wildcard set read again from the file and kept at once,
# and what one weighs (a tuple, its pattern and strings): an upper estimate.
_CACHED = 4096
_RULE_BYTES = 512
_FIRST = itemgetter(0)


class Literals:
    """Wildcard rules with a needle, found by an automaton.

    The rules themselves are not kept: only each one's code (line and
    verdict), in an array, and the needles, as one string. A rule whose
    needle is found is read again from the file (``pattern_at``), and kept
    in a small bounded cache. The automaton is lent by the process's cache
    (:mod:`.automata`): taken back under its budget of bytes, it is built
    again from the needles on the next check.

    An automaton reports every needle ending at every position: needles that
    are suffixes of one another (``a``, ``aa``, ``aaa``...) against a path of
    ``a`` report many times per character. Past a budget of reports, every
    rule is read and tried one by one instead, as without the automaton.
    """

    __slots__ = (
        "__weakref__",
        "_all",
        "_automaton",
        "_cache",
        "_codes",
        "_first",
        "_needles",
        "_next",
        "_overlap",
        "_pattern_at",
        "_strategy",
        "_unbuilt",
        "_weight",
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
        longest = max(map(len, needles))
        short = [needle[:_NEEDLE] for needle in needles] if longest > _NEEDLE else needles
        # Needle i stands for rule i. When needles repeat, the automaton is
        # given each once: ``_first`` maps it to its first rule, and rules
        # sharing a needle are chained through ``_next`` (rule -> next rule
        # with its needle, or -1). Distinct needles (a hostile file's) need
        # neither array.
        ids = dict(zip(reversed(short), range(len(short) - 1, -1, -1), strict=True))
        self._first: array[int] | None = None
        self._next: array[int] | None = None
        if len(ids) < len(short):
            following = array("i", repeat(-1, len(short)))
            for i, needle in enumerate(short):
                first = ids[needle]
                if first != i:
                    following[i] = following[first]
                    following[first] = i
            self._next = following
            # The automaton numbers needles in ``ids`` order: map to rules.
            self._first = array("i", ids.values())
            short = list(ids)
        self._overlap = min(longest, _NEEDLE) - 1
        # What the automaton is built again from, once the process-wide
        # cache took it back: one string (normalised needles hold no "\n").
        self._needles = "\n".join(short)
        # Weighed in the process's cache: the automaton, and the rules read
        # again and kept beside it (dropped with it).
        self._weight = AUTOMATON_BYTES_PER_CHAR * len(self._needles)
        self._weight += min(len(codes), _CACHED) * _RULE_BYTES
        self._automaton: AhoCorasick | None = None
        # Built on the first check, from these (no need to split the string).
        self._unbuilt: list[str] | None = short

    def _matcher(self) -> AhoCorasick:
        """The automaton, built (and admitted to the process's cache) if it was taken back."""
        automaton = self._automaton
        if automaton is not None:
            automata.touch(self)
            return automaton
        needles = self._unbuilt
        if needles is None:
            needles = self._needles.split("\n")
        self._unbuilt = None
        automaton = AhoCorasick(
            needles, store_patterns=False, implementation=Implementation.ContiguousNFA
        )
        self._automaton = automaton
        automata.admit(self, self._weight)
        return automaton

    def drop_automaton(self) -> None:
        """Called by the process's cache: let the automaton go (built again when needed).

        The rules read again go with it: they are weighed with it.
        """
        self._automaton = None
        self._cache = {}
        self._all = None

    @property
    def has_automaton(self) -> bool:
        return self._automaton is not None

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
        find = self._matcher().find_matches_as_indexes
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
        everything = self._all
        if everything is None:
            everything = sorted(map(self._wild_uncached, range(len(self._codes))), key=_FIRST)
            if self._automaton is not None:
                # Kept while the automaton is: weighed with it.
                self._all = everything
                automata.admit(self, self._weight + len(everything) * _RULE_BYTES, built=False)
        return everything

    def scan(self, path: str, best_rank: int, best: int) -> tuple[int, int]:
        """The best-ranked matching rule, if it ranks above ``best``."""
        found = self.present(path)
        if found is None:
            return scan_checked(self._everything(), path, best_rank, best)
        if not found:
            return best_rank, best
        first, following = self._first, self._next
        if first is None or following is None:
            candidates = list(map(self._wild, found))
        else:
            candidates = []
            for needle in found:
                rule = first[needle]
                while rule >= 0:
                    candidates.append(self._wild(rule))
                    rule = following[rule]
        candidates.sort(key=_FIRST)
        return scan_checked(candidates, path, best_rank, best)
