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
from collections.abc import Iterable
from operator import itemgetter

from scrapy_robotrules.engine.robots.check_work import CheckWork, Column, CountedReads
from scrapy_robotrules.engine.robots.patterns import Pattern
from scrapy_robotrules.engine.robots.precedence import PrecedenceStrategy, rule_code
from scrapy_robotrules.engine.robots.star_columns import (
    ALWAYS,
    ENDS,
    EXACT,
    FIND,
    GENERAL,
    ManyStars,
    StarRules,
)

__all__ = [
    "Bucketed",
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


def _parents(keys: list[str]) -> list[int]:
    """For each of the sorted ``keys``, the index of its longest proper prefix among them, or -1."""
    if len(keys) == 1:
        return [-1]  # most often: the "" bucket alone
    parents: list[int] = []
    chain: list[int] = []  # the keys before this one that are prefixes of the last
    for i, key in enumerate(keys):
        while chain and not key.startswith(keys[chain[-1]]):
            chain.pop()
        parents.append(chain[-1] if chain else -1)
        chain.append(i)
    return parents


Row = tuple[str, int, int, str, int, int, Pattern | None]
"""A wildcard rule as :class:`Bucketed` sorts it: (bucket key, rank) then a :data:`Wild`."""


def _column_rows(
    strategy: PrecedenceStrategy, stars: Iterable[StarRules], many: Iterable[ManyStars]
) -> tuple[list[Row], bool]:
    """The rows of rules read in columns, and whether some row keeps a pattern.

    A rule of several stars (few here: many go to an automaton) keeps a
    pattern when it is ``GENERAL``; the others need none.
    """
    rows: list[Row] = []
    general = False
    for columns in many:
        for line, allow, prefix, needle, priority, shape, text, anchored in zip(
            *columns, strict=True
        ):
            pattern = None
            if shape == GENERAL:
                # Made from its normalised prefix, tail and anchor (normalising
                # them again changes nothing).
                pattern = Pattern(f"{prefix}*{text}{'$' if anchored else ''}")
                general = True
            rank = strategy.rank(line, allow, priority)
            rows.append(
                (
                    _bucket_key(prefix),
                    rank,
                    shape,
                    needle,
                    len(prefix),
                    rule_code(line, allow),
                    pattern,
                )
            )
    for group in stars:
        for line, allow, head, star, tail, anchor in zip(*group, strict=True):
            prefix = head.decode()
            # SPEC 5: the pattern's length, "*" and "$" counting one.
            rank = strategy.rank(line, allow, len(head) + len(star) + len(tail) + len(anchor))
            shape = _star_shape(star=bool(star), tail=bool(tail), anchored=bool(anchor))
            rows.append(
                (
                    _bucket_key(prefix),
                    rank,
                    shape,
                    tail.decode(),
                    len(prefix),
                    rule_code(line, allow),
                    None,
                )
            )
    return rows, general


def _bucket_key(prefix: str) -> str:
    """The bucket of a rule whose text before its ``*`` is ``prefix``.

    Every normalised path starts with "/": the "" and "/" buckets always
    apply, so they are one.
    """
    return "" if prefix in ("", "/") else prefix


def _star_shape(*, star: bool, tail: bool, anchored: bool) -> int:
    """The shape of a rule of one star at most, maybe a text after it, maybe a ``$``.

    ``/a$`` is ``EXACT``; ``/a*`` and ``/a*$`` (the prefix is all) are
    ``ALWAYS``; ``/a*b`` is ``FIND``; ``/a*b$`` is ``ENDS``. (``/a`` is no
    wildcard rule: a plain prefix.)
    """
    if not star:
        return EXACT if anchored else ALWAYS
    if not tail:
        return ALWAYS
    return ENDS if anchored else FIND


class Bucketed:
    """Wildcard rules bucketed by the literal text before their first ``*``, as flat arrays.

    Rows are sorted by (bucket, rank); a row is a rank, a shape, a piece,
    the prefix's length and a rule code, in parallel arrays: no object per
    rule but its piece (and a pattern for the rare ``GENERAL``). Rules
    written ``/*...`` or ``*...`` are the bucket of key ``""``, which every
    path starts with: the last of every path's chain.
    """

    __slots__ = (
        "_codes",
        "_general",
        "_keys",
        "_offsets",
        "_parents",
        "_pieces",
        "_ranks",
        "_shapes",
        "_starts",
    )

    def __init__(
        self,
        strategy: PrecedenceStrategy,
        wild: Iterable[WildRule],
        stars: Iterable[StarRules],
        many: Iterable[ManyStars] = (),
    ) -> None:
        rows, general = _column_rows(strategy, stars, many)
        for line, allow, pattern in wild:
            shape, piece = shape_of(pattern)
            prefix = pattern.prefix
            rank = strategy.rank(line, allow, pattern.priority)
            several = None
            if shape == GENERAL:
                several = pattern
                general = True
            code = rule_code(line, allow)
            rows.append((_bucket_key(prefix), rank, shape, piece, len(prefix), code, several))
        rows.sort(key=itemgetter(0, 1))  # by bucket, then rank
        keys, ranks, shapes, pieces, offsets, codes, patterns = map(list, zip(*rows, strict=True))
        self._ranks = array("q", ranks)
        self._shapes = bytes(shapes)
        self._pieces: Column[str] = pieces
        self._offsets = array("i", offsets)
        self._codes = array("i", codes)
        self._general: dict[int, Pattern] | None = None
        if general:
            self._general = {i: kept for i, kept in enumerate(patterns) if kept is not None}
        # Each bucket's key, where its rows start (and, one more, where the
        # last ends), and its parent: the bucket of its longest proper prefix.
        distinct = sorted(set(keys))
        self._keys: Column[str] = distinct
        self._starts = array("i", [bisect_left(keys, key) for key in distinct])
        self._starts.append(len(keys))
        self._parents = array("i", _parents(distinct))

    def count_into(self, work: CheckWork) -> None:
        """Count the buckets checks walk and the rows they try into ``work``, from now on.

        A bucket is walked by comparing its key with the path (a bisection
        of the keys too), a row tried by looking for its piece in the path:
        those two columns count their reads.
        """
        self._keys = CountedReads.of(self._keys, work, "buckets_walked")
        self._pieces = CountedReads.of(self._pieces, work, "rules_tried")

    def scan(self, path: str, best_rank: int, best: int) -> tuple[int, int]:
        """The best matching rule of every bucket ``path`` starts with, if it ranks above ``best``.

        Those buckets are all on one chain of parents, from the greatest key
        not above the path (see :class:`.PrefixSet`). In a bucket, the rows
        that could still rank above the best found are cut by one bisection
        and tried in rank order: the first match is the bucket's best.
        """
        keys, parents, starts, ranks = self._keys, self._parents, self._starts, self._ranks
        shapes, pieces, offsets = self._shapes, self._pieces, self._offsets
        b = bisect_right(keys, path) - 1
        while b >= 0:
            key = keys[b]
            if path[: len(key)] != key:
                b = parents[b]
                continue
            start = starts[b]
            stop = bisect_left(ranks, best_rank, start, starts[b + 1])
            b = parents[b]
            for i in range(start, stop):
                piece = pieces[i]
                # A path lacking a row's piece never matches it (an ALWAYS or
                # EXACT row's piece is empty): the "in" operator turns most
                # rows away without a call.
                if piece not in path:
                    continue
                shape = shapes[i]
                if shape == FIND:
                    if offsets[i] and path.find(piece, offsets[i]) < 0:
                        continue
                elif shape == ENDS:
                    if not path.endswith(piece) or len(path) - len(piece) < offsets[i]:
                        continue
                elif shape == EXACT:
                    if len(path) != offsets[i]:
                        continue
                elif shape != ALWAYS:
                    general = self._general
                    if general is None or not general[i].matches(path):
                        continue
                best_rank, best = ranks[i], self._codes[i]
                break
        return best_rank, best
