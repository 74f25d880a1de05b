"""Wildcard rules (SPEC 4 patterns, ranked as SPEC 5 says), bucketed by the text before their ``*``.

A path is only tried against the buckets it starts with, each in rank
order, and the scan stops at the first match or once no better rank is
left. Most wildcard rules take one of a few shapes (``/*.php$``,
``/a/*b``) that a check decides with one ``str.find`` or ``str.endswith``,
without a :class:`.Pattern` object per rule.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from operator import itemgetter

from ..patterns import Pattern
from ..precedence import PrecedenceStrategy, rule_code
from .columns import ALWAYS, ENDS, EXACT, FIND, GENERAL, ManyStars, StarRules
from .prefixes import PrefixSet

__all__ = [
    "ALWAYS",
    "ENDS",
    "EXACT",
    "FIND",
    "GENERAL",
    "Bucketed",
    "ManyStars",
    "StarRules",
    "Wild",
    "WildRule",
    "scan_checked",
    "shape_of",
    "wild_entry",
]

Wild = tuple[int, int, str, int, Pattern | None, int]
"""(rank, shape, piece, offset, pattern, rule code); see :func:`shape_of`.

A bucket's ``FIND`` and ``ENDS`` rules (most wildcard rules) keep no
pattern: their piece and the prefix's length are all a check needs.
"""

WildRule = tuple[int, bool, Pattern]
"""A wildcard rule as read: (line, allow, pattern)."""


_FIRST, _SECOND, _THIRD, _FOURTH, _FIFTH, _SIXTH = map(itemgetter, range(6))
_KEY_RANK = itemgetter(0, 1)


def shape_of(pattern: Pattern) -> tuple[int, str]:
    """How a path in the pattern's bucket (so starting with its prefix) is matched.

    ``FIND``: one piece after the prefix, anywhere (``/*foo``, ``/a*b``).
    ``ENDS``: one piece ending the path (``/*.pdf$``). ``ALWAYS``: the
    prefix is all (``/a*``). ``EXACT``: the path is the prefix (``/a$``).
    Else ``GENERAL``.
    """
    middle, last, anchored = pattern.middle, pattern.last, pattern.anchored
    if not anchored and len(middle) == 1:
        return FIND, middle[0]
    if last is not None and not middle:
        return ENDS, last
    if not middle and last is None:
        return (EXACT if anchored else ALWAYS), ""
    return GENERAL, pattern.needle


def wild_entry(strategy: PrecedenceStrategy, line: int, allow: bool, pattern: Pattern) -> Wild:
    shape, piece = shape_of(pattern)
    return (
        strategy.rank(line, allow, pattern.priority),
        shape,
        piece,
        len(pattern.prefix),
        pattern,
        rule_code(line, allow),
    )


def scan_checked(rules: Iterable[Wild], path: str, best_rank: int, best: int) -> tuple[int, int]:
    """The first matching rule of ``rules`` (in rank order), if it ranks above ``best``."""
    for rank, shape, piece, offset, pattern, rule in rules:
        if rank >= best_rank:
            break
        if pattern is None:
            continue  # never so: these rules come from wild_entry, which keeps patterns
        if offset > 1 and not path.startswith(pattern.prefix):
            continue
        if shape == FIND:
            if path.find(piece, offset) >= 0:
                return rank, rule
        elif shape == ENDS:
            if path.endswith(piece) and len(path) - len(piece) >= offset:
                return rank, rule
        elif pattern.matches(path):
            return rank, rule
    return best_rank, best


class Bucketed:
    """Wildcard rules bucketed by the literal text before their first ``*``, as flat arrays.

    Rows are sorted by (bucket, rank); a row is a rank, a shape, a piece,
    the prefix's length and a rule code, in parallel arrays: no object per
    rule but its piece (and a pattern for the rare ``GENERAL``).
    """

    __slots__ = (
        "_codes",
        "_general",
        "_offsets",
        "_pieces",
        "_ranks",
        "_root",
        "_set",
        "_shapes",
        "_starts",
    )

    def __init__(
        self,
        strategy: PrecedenceStrategy,
        wild: Iterable[WildRule],
        stars: Iterable[StarRules],
        many: Iterable[ManyStars] = (),
        pattern_at: Callable[[int], Pattern] | None = None,
    ) -> None:
        rank_of = strategy.rank
        rows: list[tuple[str, int, int, str, int, int, Pattern | None]] = []
        for columns in many:
            # Rules of several stars, read without a pattern: a GENERAL one
            # (few here: many go to an automaton) is read again from the file.
            for line, allow, prefix, needle, priority, shape in zip(*columns, strict=True):
                key = "" if prefix in ("", "/") else prefix
                several = None
                if shape == GENERAL:
                    if pattern_at is None:
                        raise ValueError("rules of several stars need pattern_at")
                    several = pattern_at(line)
                code = rule_code(line, allow)
                rank = rank_of(line, allow, priority)
                rows.append((key, rank, shape, needle, len(prefix), code, several))
        for group in stars:
            # Plain text around one star at most: no Pattern needed, the row
            # is made from the text around the star (as Pattern would cut it).
            for line, allow, head, star, tail, anchor in zip(*group, strict=True):
                prefix = head.decode()
                key = "" if prefix in ("", "/") else prefix
                length = len(head) + len(star) + len(tail) + len(anchor)
                rank = rank_of(line, allow, length)
                if not star:
                    shape = EXACT if anchor else ALWAYS
                elif tail:
                    shape = ENDS if anchor else FIND
                else:
                    shape = ALWAYS  # "/a*", "/a*$": the prefix is all
                code = rule_code(line, allow)
                rows.append((key, rank, shape, tail.decode(), len(prefix), code, None))
        for line, allow, pattern in wild:
            shape, piece = shape_of(pattern)
            prefix = pattern.prefix
            # Every normalised path starts with "/": the "" and "/" buckets
            # always apply, so they are one, tried first without a lookup.
            key = "" if prefix in ("", "/") else prefix
            rank = rank_of(line, allow, pattern.priority)
            several = pattern if shape == GENERAL else None
            rows.append((key, rank, shape, piece, len(prefix), rule_code(line, allow), several))
        rows.sort(key=_KEY_RANK)
        self._ranks = array("q", map(_SECOND, rows))
        self._shapes = bytes(map(_THIRD, rows))
        self._pieces: list[str] = list(map(_FOURTH, rows))
        self._offsets = array("i", map(_FIFTH, rows))
        self._codes = array("i", map(_SIXTH, rows))
        general = {i: kept for i, row in enumerate(rows) if (kept := row[6]) is not None}
        self._general: dict[int, Pattern] | None = general or None
        keys = list(map(_FIRST, rows))
        self._root = bisect_right(keys, "")
        self._set: PrefixSet[str] | None = None
        self._starts: array[int] | None = None
        if self._root < len(keys):
            prefixes = sorted(set(keys[self._root :]))
            self._set = PrefixSet(prefixes)
            self._starts = array("i", [bisect_left(keys, p) for p in prefixes])
            self._starts.append(len(keys))

    def scan(self, path: str, best_rank: int, best: int) -> tuple[int, int]:
        if self._root:
            best_rank, best = self._scan(0, self._root, path, best_rank, best)
        starts = self._starts
        if starts is not None and self._set is not None:
            for bucket in self._set.all(path):
                best_rank, best = self._scan(
                    starts[bucket], starts[bucket + 1], path, best_rank, best
                )
        return best_rank, best

    def _scan(self, start: int, end: int, path: str, best_rank: int, best: int) -> tuple[int, int]:
        """The bucket's first matching rule in rank order, if it ranks above ``best``."""
        ranks, shapes, pieces, offsets = self._ranks, self._shapes, self._pieces, self._offsets
        for i in range(start, end):
            rank = ranks[i]
            if rank >= best_rank:
                break
            shape = shapes[i]
            if shape == FIND:
                found = path.find(pieces[i], offsets[i]) >= 0
            elif shape == ENDS:
                piece = pieces[i]
                found = path.endswith(piece) and len(path) - len(piece) >= offsets[i]
            elif shape == ALWAYS:
                found = True
            elif shape == EXACT:
                found = len(path) == offsets[i]
            else:
                general = self._general
                found = pieces[i] in path and general is not None and general[i].matches(path)
            if found:
                return rank, self._codes[i]
        return best_rank, best
