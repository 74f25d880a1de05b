"""The rules that apply to one crawler, indexed to find the deciding one fast (SPEC 4 and 5).

An index holds no object per rule: plain prefixes in a :class:`.PrefixSet`
with each one's best rule code, wildcard rules in flat bucketed arrays
(:mod:`.wildcards`) or, when there are many, behind an automaton
(:mod:`.hostile.literals`). What "best" means is the precedence strategy's to say
(:mod:`.precedence`); the index only asks it.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Sequence
from itertools import compress, repeat
from typing import NamedTuple

from scrapy_robotrules.engine.robots.check_work import CheckWork
from scrapy_robotrules.engine.robots.hostile.literals import AUTOMATON_MIN, Literals
from scrapy_robotrules.engine.robots.patterns import Pattern
from scrapy_robotrules.engine.robots.precedence import (
    NO_RANK,
    NO_RULE,
    PlainRules,
    PrecedenceStrategy,
    rule_code,
)
from scrapy_robotrules.engine.robots.prefixes import PrefixSet
from scrapy_robotrules.engine.robots.star_columns import ENDS, FIND, ManyStars, StarRules
from scrapy_robotrules.engine.robots.wildcards import Bucketed, WildRule, shape_of

__all__ = ["RuleIndex"]

_TWICE = (2).__mul__  # rule_code()'s line * 2, as a C callable for map()


class Needled(NamedTuple):
    """The columns an automaton is built from: per rule with a needle, in parallel."""

    needles: list[str]
    codes: array[int]
    priorities: list[int]
    shapes: bytearray
    prefixes: list[str]


def _needled_columns(
    wild: list[WildRule], stars: Sequence[StarRules], many: Sequence[ManyStars]
) -> tuple[Needled, list[StarRules], list[ManyStars]]:
    """The rules with a needle, as columns, and the star rules without one left over.

    ``wild`` holds only rules with a needle. Column by column, with no
    Python per rule of ``stars`` and ``many`` (a hostile file's tens of
    thousands). A fast path: its plain reference, rule by rule, is in
    ``tests/helpers/plain_references.py``.
    """
    needles = [pattern.needle for _, _, pattern in wild]
    codes = array("i", [rule_code(line, is_allow) for line, is_allow, _ in wild])
    priorities = [pattern.priority for _, _, pattern in wild]
    shapes = bytearray(shape_of(pattern)[0] for _, _, pattern in wild)
    starts = [pattern.prefix for _, _, pattern in wild]
    rest: list[StarRules] = []
    for group in stars:
        pieces = group.pieces
        filled = list(compress(pieces, pieces))
        if not filled:
            rest.append(group)
            continue
        # Decoded together: normalised pieces are ASCII.
        needles += b"\n".join(filled).decode("ascii").split("\n")
        # rule_code (line * 2 + allow), in C: no Python call per rule.
        doubled = map(_TWICE, compress(group.lines, pieces))
        codes.extend(map(operator.add, doubled, compress(group.allows, pieces)))
        # Priority: the pattern's length, "*" and "$" counting one.
        anchors = list(compress(group.anchors, pieces))
        lengths = map(len, filled)
        heads = set(group.prefixes)
        kinds = set(anchors)
        if len(heads) == 1 and len(kinds) == 1:
            # One text before the star, one anchor (a hostile file's
            # many rules): the same for every rule, added in C.
            head, anchor = next(iter(heads)), next(iter(kinds))
            priorities += map((len(head) + 1 + len(anchor)).__add__, lengths)
            starts += repeat(head.decode(), len(anchors))
            shapes += bytes([ENDS if anchor else FIND]) * len(anchors)
        else:
            more = map(len, map(bytes.__add__, compress(group.prefixes, pieces), anchors))
            priorities += map((1).__add__, map(operator.add, lengths, more))
            starts += map(bytes.decode, compress(group.prefixes, pieces))
            shapes += bytes(map(ENDS.__mul__, map(len, anchors)))  # FIND is 0
        if len(filled) < len(pieces):
            rest.append(group.picked(list(map(operator.not_, pieces))))
    rest_many: list[ManyStars] = []
    for columns in many:
        kept = list(map(bool, columns.needles))
        needles += compress(columns.needles, kept)
        doubled = map(_TWICE, compress(columns.lines, kept))
        codes.extend(map(operator.add, doubled, compress(columns.allows, kept)))
        priorities += compress(columns.priorities, kept)
        shapes += bytes(compress(columns.shapes, kept))
        starts += compress(columns.prefixes, kept)
        if not all(kept):
            rest_many.append(columns.picked(list(map(operator.not_, kept))))
    return Needled(needles, codes, priorities, shapes, starts), rest, rest_many


class RuleIndex:
    """The rules of the groups that apply to one crawler, ranked by one strategy.

    Plain prefix rules are held as a sorted list of prefixes and an array
    of the best rule's code for each (the strategy says which rule of a
    prefix is best). Wildcard rules are bucketed by the literal text before
    their first ``*``, so a path is only tried against buckets it starts
    with, each in rank order; when there are many, those with a literal
    after a ``*`` are found with :class:`.Literals` instead, and read again
    from the file on demand.
    """

    __slots__ = ("_codes", "_literals", "_prefixes", "_strategy", "_wild", "groups")

    def __init__(
        self,
        allow: Sequence[PlainRules],
        disallow: Sequence[PlainRules],
        wild: Sequence[WildRule],
        stars: Sequence[StarRules],
        strategy: PrecedenceStrategy,
        *,
        pattern_at: Callable[[int], Pattern],
        groups: tuple[int, ...] = (),
        many: Sequence[ManyStars] = (),
        work: CheckWork | None = None,
    ) -> None:
        """``work``: where checks count what they cost, if the file counts (see
        :class:`.CheckWork`)."""
        self.groups = groups
        """The groups of the file the rules are from, so that callers can share the index."""
        self._strategy = strategy
        best = strategy.best_per_prefix(allow, disallow)
        prefixes = sorted(best)
        self._prefixes = PrefixSet(prefixes)
        self._codes = array("i", [best[prefix] for prefix in prefixes])
        del best
        self._literals: Literals | None = None
        self._wild: Bucketed | None = None
        # Rules with a needle (text after a star) may go to the automaton:
        # counted only when there are enough wildcard rules at all.
        starred = sum(len(group.lines) for group in stars)
        several = sum(len(group.lines) for group in many)
        with_needle = []
        needled = 0
        if len(wild) + starred + several >= AUTOMATON_MIN:
            with_needle = [rule for rule in wild if rule[2].needle]
            needled = len(with_needle) + starred + several
            needled -= sum(group.pieces.count(b"") for group in stars)
            needled -= sum(group.needles.count("") for group in many)
        if needled >= AUTOMATON_MIN:
            columns, stars, many = _needled_columns(with_needle, stars, many)
            self._literals = Literals(
                columns.needles,
                columns.codes,
                strategy=strategy,
                priorities=columns.priorities,
                shapes=bytes(columns.shapes),
                prefixes=columns.prefixes,
                pattern_at=pattern_at,
                work=work,
            )
            wild = [rule for rule in wild if not rule[2].needle]
            starred = sum(len(group.lines) for group in stars)
            several = sum(len(group.lines) for group in many)
        if wild or starred or several:
            self._wild = Bucketed(strategy, wild, stars, many)
            if work is not None:
                self._wild.count_into(work)

    def count_into(self, work: CheckWork) -> None:
        """Count what checks cost into ``work`` from now on."""
        if self._wild is not None:
            self._wild.count_into(work)
        if self._literals is not None:
            self._literals.work = work

    def built_for(self, groups: tuple[int, ...], strategy: PrecedenceStrategy) -> bool:
        """Whether this index answers for ``groups`` ranked by ``strategy``."""
        return self.groups == groups and self._strategy is strategy

    def decide(self, path: str) -> int:
        """The deciding rule's code for the normalised ``path``, or ``NO_RULE``.

        The best plain rule (on the chain of prefixes the path starts with),
        then the automaton's and the buckets' if they rank above it.
        """
        best_rank, best = NO_RANK, NO_RULE
        # Normalised: ASCII, as the prefixes.
        i = self._prefixes.longest(path.encode()) if self._prefixes.items else -1
        if i >= 0:
            best_rank, best = self._strategy.best_prefix_rule(self._prefixes, self._codes, i)
        if self._literals is not None:
            best_rank, best = self._literals.scan(path, best_rank, best)
        if self._wild is not None:
            best_rank, best = self._wild.scan(path, best_rank, best)
        return best
