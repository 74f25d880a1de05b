"""After a flood of reports: every rule in rank order, until one matches (bounded on hostile files).

Needles nested in one another without a period (all the windows of one
random text, say) report at every character of a path made of that text:
reading on costs up to one report per needle length at each character.
Once a path brings a flood, the rules are walked in rank order instead,
each decided from what the automaton found so far, or searched for in the
path's unread end as long as that costs less than reading it: the best
rule is usually among the first. SPEC 5 gives the order.
"""

from __future__ import annotations

from array import array
from typing import Protocol

from scrapy_robotrules.engine.index.automata import automata
from scrapy_robotrules.engine.index.columns import ENDS, FIND
from scrapy_robotrules.engine.index.pieces import Found
from scrapy_robotrules.engine.index.runs import Runs
from scrapy_robotrules.engine.patterns import Pattern
from scrapy_robotrules.engine.precedence import PrecedenceStrategy

__all__ = ["Floods"]


class _Index(Protocol):
    """What :class:`Floods` reads of the index it is mixed in (:class:`.Literals`)."""

    _codes: array[int]
    _needle_of: array[int] | None
    _needles: str
    _order: array[int] | None
    _periodic: dict[int, tuple[str, int]] | None
    _prefix_ids: array[int] | None
    _prefix_one: int
    _priorities: array[int]
    _shapes: bytes
    _split: list[str] | None
    _strategy: PrecedenceStrategy
    _weight: int

    @property
    def has_automaton(self) -> bool: ...
    def drop_automaton(self) -> None: ...
    def _in_runs(self, rule: int, needle: int, path: str, runs: Runs) -> bool: ...
    def _offset(self, rule: int) -> int: ...
    def _ordered(self) -> tuple[array[int], list[str]]: ...
    def _pattern(self, rule: int) -> Pattern: ...
    def _prefixed(self, path: str) -> set[int] | None: ...


class Floods:
    """The walk in rank order, mixed in :class:`.Literals`."""

    __slots__ = ()
    # Kept by the index (its slots) while its automaton is.
    _order: array[int] | None
    _split: list[str] | None

    def _walk(
        self: _Index,
        path: str,
        *,
        found: Found,
        unread: list[tuple[str, int]],
        runs: Runs | None,
        best_rank: int,
        best: int,
        searches: int,
    ) -> tuple[int, int] | None:
        """After a flood: every rule in rank order, until one matches (the best one).

        A needle found in the part of the path read so far decides its rule
        there; another is searched for in the unread end, as long as that
        costs less than reading it (the reports so far tell how many a
        character): else ``None``, and the rest is read.
        """
        order, needles = self._ordered()
        size = len(path)
        cut = unread[0][1] if unread else size
        codes, priorities, rank_of = self._codes, self._priorities, self._strategy.rank
        shapes, needle_of, periodic = self._shapes, self._needle_of, self._periodic
        prefixed, prefix_ids, one = self._prefixed(path), self._prefix_ids, self._prefix_one
        for rule in order:
            code = codes[rule]
            rank = rank_of(code >> 1, bool(code & 1), priorities[rule])
            if rank >= best_rank:
                break
            if (
                prefixed is not None
                and (one if prefix_ids is None else prefix_ids[rule]) not in prefixed
            ):
                continue
            needle = rule if needle_of is None else needle_of[rule]
            if periodic is not None and runs is not None and needle in periodic:
                if self._in_runs(rule, needle, path, runs):
                    return rank, code
                continue
            shape, offset, text = shapes[rule], self._offset(rule), needles[needle]
            if shape == ENDS:
                matched = path.endswith(text) and size - len(text) >= offset
            else:
                seen = found.get(needle)
                matched = seen is not None and seen[0] + seen[1][1] >= offset
                if not matched and cut < size:
                    # Seen before the cut if at all: any later copy is unread.
                    searches -= 1
                    if searches < 0:
                        return None
                    matched = path.find(text, max(offset, cut)) >= 0
                if matched and shape != FIND:
                    matched = self._pattern(rule).matches(path)
            if matched:
                return rank, code
        return best_rank, best

    def _ordered(self: _Index) -> tuple[array[int], list[str]]:
        """Every rule in rank order, and the needles: kept (and weighed) with the automaton."""
        order, needles = self._order, self._split
        if order is None or needles is None:
            ranks = self._strategy.ranks(self._codes, self._priorities)
            order = array("i", sorted(range(len(ranks)), key=ranks.__getitem__))
            del ranks
            needles = self._needles.split("\n")
            if self.has_automaton:
                self._order, self._split = order, needles
                extra = 4 * len(order) + 64 * len(needles) + 2 * len(self._needles)
                automata.admit(self, self._weight + extra, built=False)
        return order, needles
