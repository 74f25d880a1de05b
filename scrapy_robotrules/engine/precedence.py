"""Which matching rule decides: the three precedence modes, and the index that finds it fast.

Each mode is a ranking of rules; the matching rule of lowest rank decides
(SPEC 5):

``most-specific`` (RFC 9309, Google and Bing today)
    longest normalised pattern; on equal length ``Allow`` wins. This is why
    ``Allow: /`` then ``Disallow: /cgi-bin`` keeps crawlers out of
    ``/cgi-bin/x``: the webmaster's more precise line is the one meant.
``first-match`` (1994 spec, 1996 draft)
    the first matching rule in file order; ``/cgi-bin/x`` is allowed above.
``allow-first`` (the legacy "Google reads every Allow first" description)
    any matching ``Allow``, else any matching ``Disallow``.

Plain prefix rules (most rules) are found without scanning them: sorted
prefixes plus, for each, its longest proper prefix in the set. The greatest
prefix not above the path, or one of its ancestors, is the longest matching
one, and every matching prefix lies on that ancestor chain, so each entry
also keeps the best-ranked rule of its chain. Wildcard rules are scanned in
rank order and the scan stops at the first match or once no better rank is
left.
"""

from __future__ import annotations

import operator
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, compress, repeat
from operator import itemgetter
from typing import AnyStr, Generic, NamedTuple

from ahocorasick_rs import AhoCorasick, Implementation

from .patterns import Pattern

__all__ = [
    "NO_RULE",
    "PRECEDENCE_MODES",
    "Rule",
    "RuleIndex",
    "check_precedence",
    "code_allows",
    "code_line",
    "rule_code",
]

MOST_SPECIFIC = "most-specific"
FIRST_MATCH = "first-match"
ALLOW_FIRST = "allow-first"
PRECEDENCE_MODES = (MOST_SPECIFIC, FIRST_MATCH, ALLOW_FIRST)


class Rule:
    """An ``Allow`` or ``Disallow`` line: what it says and where."""

    __slots__ = ("directive", "line", "pattern")

    def __init__(self, directive: str, pattern: str, line: int) -> None:
        self.directive = directive
        self.pattern = pattern
        self.line = line

    @property
    def allow(self) -> bool:
        return self.directive == "allow"

    def __repr__(self) -> str:
        return f"<Rule {self}>"

    def __str__(self) -> str:
        return f"{self.directive.capitalize()}: {self.pattern} (line {self.line})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rule):
            return NotImplemented
        return (self.directive, self.pattern, self.line) == (
            other.directive,
            other.pattern,
            other.line,
        )

    def __hash__(self) -> int:
        return hash((self.directive, self.pattern, self.line))


NO_RULE = -1
"""What :meth:`RuleIndex.decide` answers when no rule matches."""


def rule_code(line: int, allow: bool) -> int:
    """How an index holds a rule: one int, its line and whether it allows.

    A large file has a hundred thousand rules: an index keeps a code per
    rule (in arrays where it can), and the rule's text stays in the file,
    read again only by ``explain``.
    """
    return line * 2 + allow


def code_line(code: int) -> int:
    return code >> 1


def code_allows(code: int) -> bool:
    return bool(code & 1)


_ORDER = 1 << 20  # above any line number a 500 KiB file can have
_MAX_PRIORITY = 1 << 22  # above any normalised pattern length
_MODES = {MOST_SPECIFIC: 0, FIRST_MATCH: 1, ALLOW_FIRST: 2}


def check_precedence(mode: str) -> str:
    """``mode`` itself, or ``ValueError`` naming the valid choices."""
    if mode not in _MODES:
        choices = ", ".join(repr(m) for m in PRECEDENCE_MODES)
        raise ValueError(f"precedence must be one of {choices}, not {mode!r}")
    return mode


_NO_RANK = 1 << 200
# From this many wildcard rules with a literal after a "*", they are found by
# an automaton (:class:`_Literals`); fewer cost less scanned one by one.
_AUTOMATON_MIN = 64
# The automaton reads a long path in pieces of this many characters, so that
# a flood of reports is noticed before it fills memory; past twice the path
# length plus this many reports, it gives up (see :class:`_Literals`).
_CHUNK = 4096
_REPORTS = 10_000
_NEEDLE = 64
_FIRST, _SECOND, _THIRD, _FOURTH, _FIFTH, _SIXTH = map(itemgetter, range(6))
_KEY_RANK = itemgetter(0, 1)
# Rules of a large wildcard set read again from the file and kept at once.
_CACHED = 4096


def _rank(kind: int, line: int, allow: int, priority: int) -> int:
    if kind == 0:
        return ((_MAX_PRIORITY - priority) * 2 + (not allow)) * _ORDER + line
    if kind == 1:
        return line
    return (not allow) * _ORDER + line


_UNKNOWN = -2
_SHORT = 1 << 15  # below this many items, indexes fit in two bytes


def _shared_start(first: AnyStr, second: AnyStr) -> AnyStr:
    """The longest common beginning of two strings (or two byte strings)."""
    end = min(len(first), len(second))
    for i in range(end):
        if first[i] != second[i]:
            return first[:i]
    return first[:end]


class _PrefixSet(Generic[AnyStr]):
    """Sorted strings, asked which of them ``text`` starts with.

    The greatest string not above ``text`` is either one, or shares a
    beginning with it; every answer then starts that shared beginning, so
    the search goes on with it, shorter each time. A string's parent (its
    longest proper prefix in the set) is found once, when first needed.
    """

    __slots__ = ("_parents", "items")

    def __init__(self, items: list[AnyStr]) -> None:
        self.items: list[AnyStr] = items
        self._parents: array[int] | None = None

    def _longest(self, text: AnyStr, end: int) -> int:
        items = self.items
        while True:
            i = bisect_right(items, text, 0, end) - 1
            if i < 0:
                return -1
            candidate = items[i]
            if text.startswith(candidate):
                return i
            text = _shared_start(candidate, text)
            end = i

    def parent(self, i: int) -> int:
        parents = self._parents
        if parents is None:
            size = len(self.items)
            parents = self._parents = array("h" if size < _SHORT else "i", [_UNKNOWN]) * size
        parent = parents[i]
        if parent == _UNKNOWN:
            parent = parents[i] = self._longest(self.items[i][:-1], i)
        return parent

    def longest(self, text: AnyStr) -> int:
        """Index of the longest string that ``text`` starts with, or -1."""
        items = self.items
        i = bisect_right(items, text) - 1
        while i >= 0 and not text.startswith(items[i]):
            i = self.parent(i)
        return i

    def all(self, text: AnyStr) -> list[int]:
        """Indexes of every string that ``text`` starts with, longest first."""
        found = []
        i = self.longest(text)
        while i >= 0:
            found.append(i)
            i = self.parent(i)
        return found


_Wild = tuple[int, int, str, int, Pattern | None, int]
"""(rank, shape, piece, offset, pattern, rule code); see :func:`_shape`.

A bucket's ``_FIND`` and ``_ENDS`` rules (most wildcard rules) keep no
pattern: their piece and the prefix's length are all a check needs.
"""

WildRule = tuple[int, bool, Pattern]
"""A wildcard rule as read: (line, allow, pattern)."""


class StarRules(NamedTuple):
    """Rules of plain characters around at most one ``*``, as read, not compiled.

    Parallel lists: line, whether it allows, the text before the star, the
    star (or nothing), the text after it (the needle), and ``$`` or
    nothing. ``/a/*``, ``/*.php$``, ``/a$``: most wildcard rules of real
    files. Many of them (a hostile file's 24,380 ``Disallow: /*<8
    letters>``) go to an automaton without one object made per rule.
    """

    lines: list[int]
    allows: list[bool]
    prefixes: list[bytes]
    stars: list[bytes]
    pieces: list[bytes]
    anchors: list[bytes]


PlainRules = tuple[Sequence[bytes], Sequence[int]]
"""Plain rules of one directive as read: normalised (ASCII) prefixes and codes, in file order."""

_FIND, _ENDS, _GENERAL, _ALWAYS, _EXACT = 0, 1, 2, 3, 4


def _shape(pattern: Pattern) -> tuple[int, str]:
    """How a path in the pattern's bucket (so starting with its prefix) is matched.

    ``_FIND``: one piece after the prefix, anywhere (``/*foo``, ``/a*b``).
    ``_ENDS``: one piece ending the path (``/*.pdf$``). ``_ALWAYS``: the
    prefix is all (``/a*``). ``_EXACT``: the path is the prefix (``/a$``).
    Else ``_GENERAL``.
    """
    middle, last, anchored = pattern.middle, pattern.last, pattern.anchored
    if not anchored and len(middle) == 1:
        return _FIND, middle[0]
    if last is not None and not middle:
        return _ENDS, last
    if not middle and last is None:
        return (_EXACT if anchored else _ALWAYS), ""
    return _GENERAL, pattern.needle


def _entry(kind: int, line: int, allow: bool, pattern: Pattern, *, keep: bool = True) -> _Wild:
    shape, piece = _shape(pattern)
    return (
        _rank(kind, line, allow, pattern.priority),
        shape,
        piece,
        len(pattern.prefix),
        pattern if keep or shape == _GENERAL else None,
        rule_code(line, allow),
    )


class _Literals:
    """Many wildcard rules, found by the literal each needs, in one pass over the path.

    Trying every rule costs rules times path length: 24,380 rules
    ``Disallow: /*<8 letters>`` took 29 ms a check at 2,083 characters and
    over a second at 100,000. Every rule with a wildcard needs its longest
    literal piece (its needle) somewhere in the path. An Aho-Corasick automaton
    finds all needles present in one pass; only their rules are tried, in
    rank order.

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
        "_kind",
        "_next",
        "_overlap",
        "_pattern_at",
    )

    def __init__(
        self,
        kind: int,
        needles: list[str],
        codes: array[int],
        pattern_at: Callable[[int], Pattern],
    ) -> None:
        self._kind = kind
        self._codes = codes
        self._pattern_at = pattern_at
        self._cache: dict[int, _Wild] = {}
        self._all: list[_Wild] | None = None
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

    def _wild(self, rule: int) -> _Wild:
        entry = self._cache.get(rule)
        if entry is None:
            code = self._codes[rule]
            line, allow = code_line(code), code_allows(code)
            entry = _entry(self._kind, line, allow, self._pattern_at(line))
            if len(self._cache) >= _CACHED:
                self._cache.clear()
            self._cache[rule] = entry
        return entry

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

    def _everything(self) -> list[_Wild]:
        if self._all is None:
            self._all = sorted(map(self._wild_uncached, range(len(self._codes))), key=_FIRST)
        return self._all

    def _wild_uncached(self, rule: int) -> _Wild:
        code = self._codes[rule]
        line, allow = code_line(code), code_allows(code)
        return _entry(self._kind, line, allow, self._pattern_at(line))

    def scan(self, path: str, best_rank: int, best: int) -> tuple[int, int]:
        found = self.present(path)
        if found is None:
            return _scan_checked(self._everything(), path, best_rank, best)
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
        return _scan_checked(candidates, path, best_rank, best)


class _Bucketed:
    """Wildcard rules bucketed by the literal text before their first ``*``, as flat arrays.

    A path is only tried against the buckets it starts with, each in rank
    order. Rows are sorted by (bucket, rank); a row is a rank, a shape, a
    piece, the prefix's length and a rule code, in parallel arrays: no
    object per rule but its piece (and a pattern for the rare ``_GENERAL``).
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

    def __init__(self, kind: int, wild: Iterable[WildRule], stars: Iterable[StarRules]) -> None:
        rows: list[tuple[str, int, int, str, int, int, Pattern | None]] = []
        for group in stars:
            # Plain text around one star at most: no Pattern needed, the row
            # is made from the text around the star (as Pattern would cut it).
            for line, allow, head, star, tail, anchor in zip(*group, strict=True):
                prefix = head.decode()
                key = "" if prefix in ("", "/") else prefix
                length = len(head) + len(star) + len(tail) + len(anchor)
                rank = _rank(kind, line, allow, length)
                if not star:
                    shape = _EXACT if anchor else _ALWAYS
                elif tail:
                    shape = _ENDS if anchor else _FIND
                else:
                    shape = _ALWAYS  # "/a*", "/a*$": the prefix is all
                code = rule_code(line, allow)
                rows.append((key, rank, shape, tail.decode(), len(prefix), code, None))
        for line, allow, pattern in wild:
            shape, piece = _shape(pattern)
            prefix = pattern.prefix
            # Every normalised path starts with "/": the "" and "/" buckets
            # always apply, so they are one, tried first without a lookup.
            key = "" if prefix in ("", "/") else prefix
            rank = _rank(kind, line, allow, pattern.priority)
            several = pattern if shape == _GENERAL else None
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
        self._set: _PrefixSet[str] | None = None
        self._starts: array[int] | None = None
        if self._root < len(keys):
            prefixes = sorted(set(keys[self._root :]))
            self._set = _PrefixSet(prefixes)
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
            if shape == _FIND:
                found = path.find(pieces[i], offsets[i]) >= 0
            elif shape == _ENDS:
                piece = pieces[i]
                found = path.endswith(piece) and len(path) - len(piece) >= offsets[i]
            elif shape == _ALWAYS:
                found = True
            elif shape == _EXACT:
                found = len(path) == offsets[i]
            else:
                general = self._general
                found = pieces[i] in path and general is not None and general[i].matches(path)
            if found:
                return rank, self._codes[i]
        return best_rank, best


class RuleIndex:
    """The rules of the groups that apply to one crawler, ranked by one mode.

    Plain prefix rules are held as a sorted list of prefixes and an array
    of the best rule's code for each: no object per rule. The best rule per
    prefix comes from dicts filled in C (later entries override, so lists
    are fed newest first and ``Allow`` last). Wildcard rules are bucketed by
    the literal text before their first ``*``, so a path is only tried
    against buckets it starts with, each in rank order; when there are
    many, those with a literal after a ``*`` are found with
    :class:`_Literals` instead, and read again from the file on demand.
    """

    __slots__ = ("_codes", "_kind", "_literals", "_plain", "_wild", "key")

    def __init__(
        self,
        allow: Sequence[PlainRules],
        disallow: Sequence[PlainRules],
        wild: Sequence[WildRule],
        stars: Sequence[StarRules],
        mode: str,
        *,
        pattern_at: Callable[[int], Pattern],
        key: object = None,
    ) -> None:
        self.key = key
        """What the index was built for (the caller's choice), so callers can share it."""
        kind = self._kind = _MODES[mode]
        best: dict[bytes, int] = {}
        if kind == 1:
            # first-match: the earliest line wins whatever it says.
            newest_first = sorted(
                chain.from_iterable(
                    zip(codes, values, strict=True) for values, codes in (*allow, *disallow)
                ),
                reverse=True,
            )
            best = dict(zip(map(_SECOND, newest_first), map(_FIRST, newest_first), strict=True))
        else:
            # most-specific and allow-first: on the same prefix Allow wins,
            # then the earliest line.
            for rules in (disallow, allow):
                for values, codes in reversed(rules):
                    best.update(zip(reversed(values), reversed(codes), strict=True))
        prefixes = sorted(best)
        self._plain = _PrefixSet(prefixes)
        self._codes = array("i", map(best.__getitem__, prefixes))
        del best
        self._literals: _Literals | None = None
        self._wild: _Bucketed | None = None
        # Star rules with a needle (text after the star) may go to the automaton.
        starred = sum(len(group.pieces) for group in stars)
        needled = starred - sum(group.pieces.count(b"") for group in stars)
        with_needle = [rule for rule in wild if rule[2].needle]
        if len(with_needle) + needled >= _AUTOMATON_MIN:
            needles = [pattern.needle for _, _, pattern in with_needle]
            codes = array("i", [rule_code(line, is_allow) for line, is_allow, _ in with_needle])
            rest = []
            for group in stars:
                needles += map(bytes.decode, filter(None, group.pieces))
                codes.extend(
                    map(
                        rule_code,
                        compress(group.lines, group.pieces),
                        compress(group.allows, group.pieces),
                    )
                )
                if needled < starred:
                    empty = list(map(operator.not_, group.pieces))
                    rest.append(
                        StarRules(
                            list(compress(group.lines, empty)),
                            list(compress(group.allows, empty)),
                            list(compress(group.prefixes, empty)),
                            list(compress(group.stars, empty)),
                            list(compress(group.pieces, empty)),
                            list(compress(group.anchors, empty)),
                        )
                    )
            self._literals = _Literals(kind, needles, codes, pattern_at)
            wild = [rule for rule in wild if not rule[2].needle]
            stars = rest
        if wild or any(group.lines for group in stars):
            self._wild = _Bucketed(kind, wild, stars)

    def decide(self, path: str) -> int:
        """The deciding rule's code for the normalised ``path``, or ``NO_RULE``."""
        best_rank = _NO_RANK
        best = NO_RULE
        plain = self._plain
        prefixes = plain.items
        if prefixes:
            # plain.longest(), inlined: the hot path of every check.
            text = path.encode()  # normalised: ASCII, as the prefixes
            i = bisect_right(prefixes, text) - 1
            while i >= 0 and not text.startswith(prefixes[i]):
                i = plain.parent(i)
            if i >= 0:
                kind = self._kind
                codes = self._codes
                best = codes[i]
                if kind == 0:
                    # The longest prefix is the most specific plain rule.
                    best_rank = _rank(0, best >> 1, best & 1, len(prefixes[i]))
                else:
                    # Every prefix of the path lies on this chain.
                    best_rank = _rank(kind, best >> 1, best & 1, 0)
                    i = plain.parent(i)
                    while i >= 0:
                        other = codes[i]
                        rank = _rank(kind, other >> 1, other & 1, 0)
                        if rank < best_rank:
                            best_rank, best = rank, other
                        i = plain.parent(i)
        if self._literals is not None:
            best_rank, best = self._literals.scan(path, best_rank, best)
        if self._wild is not None:
            best_rank, best = self._wild.scan(path, best_rank, best)
        return best


def _scan_checked(rules: Iterable[_Wild], path: str, best_rank: int, best: int) -> tuple[int, int]:
    """The first matching rule of ``rules`` (in rank order), if it ranks above ``best``."""
    for rank, shape, piece, offset, pattern, rule in rules:
        if rank >= best_rank:
            break
        if pattern is None:
            continue  # never so: these rules come from _Literals, which keeps patterns
        if offset > 1 and not path.startswith(pattern.prefix):
            continue
        if shape == _FIND:
            if path.find(piece, offset) >= 0:
                return rank, rule
        elif shape == _ENDS:
            if path.endswith(piece) and len(path) - len(piece) >= offset:
                return rank, rule
        elif pattern.matches(path):
            return rank, rule
    return best_rank, best
