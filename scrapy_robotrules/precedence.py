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

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import compress
from operator import itemgetter
from os.path import commonprefix

from .patterns import Pattern

__all__ = ["PRECEDENCE_MODES", "Rule", "RuleIndex", "RuleRecord", "as_rule", "check_precedence"]

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


Matcher = str | Pattern | None
"""A plain rule's normalised prefix, a wildcard :class:`Pattern`, or ``None`` (never matches)."""

RuleRecord = tuple[int, bool, str, Matcher]
"""How an index holds a rule: (line, allow, pattern as written, matcher).

Tuples, not objects: a large file compiles a hundred thousand of them, and
only ``explain`` needs a :class:`Rule`.
"""


def as_rule(record: RuleRecord) -> Rule:
    line, allow, written, _ = record
    return Rule("allow" if allow else "disallow", written, line)


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
# A path this long, against more wildcard rules than this, is worth a look at
# which characters the rules need before scanning it once per rule.
_LONG_PATH = 2048
_MANY_RULES = 16
_PREFIX = itemgetter(3)


def _rank(kind: int, line: int, allow: bool, priority: int) -> int:
    if kind == 0:
        return ((_MAX_PRIORITY - priority) * 2 + (not allow)) * _ORDER + line
    if kind == 1:
        return line
    return (not allow) * _ORDER + line


class _PrefixSet:
    """Sorted strings, asked which of them ``text`` starts with.

    The greatest string not above ``text`` is either one, or shares a
    beginning with it; every answer then starts that shared beginning, so
    the search goes on with it, shorter each time. A string's parent (its
    longest proper prefix in the set) is found once, when first needed.
    """

    __slots__ = ("_parents", "items")

    def __init__(self, items: list[str]) -> None:
        self.items = items
        self._parents: dict[int, int] = {}

    def _longest(self, text: str, end: int) -> int:
        items = self.items
        while True:
            i = bisect_right(items, text, 0, end) - 1
            if i < 0:
                return -1
            candidate = items[i]
            if text.startswith(candidate):
                return i
            text = commonprefix((candidate, text))  # noqa: RUF071 (strings, not file paths)
            end = i

    def parent(self, i: int) -> int:
        parent = self._parents.get(i)
        if parent is None:
            parent = self._parents[i] = self._longest(self.items[i][:-1], i)
        return parent

    def longest(self, text: str) -> int:
        """Index of the longest string that ``text`` starts with, or -1."""
        items = self.items
        i = bisect_right(items, text) - 1
        while i >= 0 and not text.startswith(items[i]):
            i = self.parent(i)
        return i

    def all(self, text: str) -> list[int]:
        """Indexes of every string that ``text`` starts with, longest first."""
        found = []
        i = self.longest(text)
        while i >= 0:
            found.append(i)
            i = self.parent(i)
        return found


_Wild = tuple[int, int, str, int, Pattern, RuleRecord]
"""(rank, shape, piece, offset, pattern, rule); see :func:`_shape`."""

_FIND, _ENDS, _GENERAL = 0, 1, 2


def _shape(pattern: Pattern) -> tuple[int, str]:
    """How a path in the pattern's bucket (so starting with its prefix) is matched.

    ``_FIND``: one piece after the prefix, anywhere (``/*foo``, ``/a*b``).
    ``_ENDS``: one piece ending the path (``/*.pdf$``). Else ``_GENERAL``.
    """
    if not pattern.anchored and len(pattern.middle) == 1:
        return _FIND, pattern.middle[0]
    if pattern.last is not None and not pattern.middle:
        return _ENDS, pattern.last
    return _GENERAL, pattern.needle


class RuleIndex:
    """The rules of the groups that apply to one crawler, ranked by one mode.

    Built for speed of the first question as much as of the next ones: the
    best rule per plain prefix comes from dicts filled in C (later entries
    override, so lists are fed newest first and ``Allow`` last). Wildcard
    rules are bucketed by the literal text before their first ``*``, so a
    path is only tried against buckets it starts with, each in rank order.
    """

    __slots__ = ("_best", "_buckets", "_charsets", "_kind", "_plain", "_root", "_wild")

    def __init__(
        self,
        plain_allow: Sequence[RuleRecord],
        plain_disallow: Sequence[RuleRecord],
        wild: Sequence[tuple[RuleRecord, Pattern]],
        mode: str,
    ) -> None:
        kind = self._kind = _MODES[mode]
        if kind == 1:
            # first-match: the earliest line wins whatever it says.
            newest_first = sorted((*plain_allow, *plain_disallow), reverse=True)
            best = dict(zip(map(_PREFIX, newest_first), newest_first, strict=True))
        else:
            # most-specific and allow-first: on the same prefix Allow wins,
            # then the earliest line.
            disallow = plain_disallow[::-1]
            allow = plain_allow[::-1]
            best = dict(zip(map(_PREFIX, disallow), disallow, strict=True))
            best.update(zip(map(_PREFIX, allow), allow, strict=True))
        self._best: dict[str, RuleRecord] = best
        self._plain = _PrefixSet(sorted(best))
        buckets: dict[str, list[_Wild]] = {}
        for record, pattern in wild:
            rank = _rank(kind, record[0], record[1], pattern.priority)
            shape, piece = _shape(pattern)
            entry = (rank, shape, piece, len(pattern.prefix), pattern, record)
            buckets.setdefault(pattern.prefix, []).append(entry)
        # Every normalised path starts with "/": the "" and "/" buckets always
        # apply, so they are one list, tried first without a prefix lookup.
        root = buckets.pop("", []) + buckets.pop("/", [])
        root.sort(key=itemgetter(0))
        self._root = root
        for bucket in buckets.values():
            bucket.sort(key=itemgetter(0))
        self._wild = _PrefixSet(sorted(buckets))
        self._buckets = [buckets[prefix] for prefix in self._wild.items]
        self._charsets: dict[int, tuple[frozenset[str], list[frozenset[str]]]] = {}

    def decide(self, path: str) -> RuleRecord | None:
        """The deciding rule for the normalised ``path``, or ``None`` if none matches."""
        best_rank = _NO_RANK
        best: RuleRecord | None = None
        plain = self._plain
        prefixes = plain.items
        if prefixes:
            i = plain.longest(path)
            if i >= 0:
                kind = self._kind
                best = self._best[prefixes[i]]
                if kind == 0:
                    # The longest prefix is the most specific plain rule.
                    best_rank = _rank(0, best[0], best[1], len(prefixes[i]))
                else:
                    # Every prefix of the path lies on this chain.
                    best_rank = _rank(kind, best[0], best[1], 0)
                    i = plain.parent(i)
                    while i >= 0:
                        other = self._best[prefixes[i]]
                        rank = _rank(kind, other[0], other[1], 0)
                        if rank < best_rank:
                            best_rank, best = rank, other
                        i = plain.parent(i)
        if len(path) > _LONG_PATH and len(self._root) + len(self._buckets) > _MANY_RULES:
            return self._decide_long(path, best_rank, best)
        if self._root:
            best_rank, best = _scan(self._root, path, best_rank, best)
        if self._buckets:
            for bucket in self._wild.all(path):
                best_rank, best = _scan(self._buckets[bucket], path, best_rank, best)
        return best

    def _decide_long(self, path: str, best_rank: int, best: RuleRecord | None) -> RuleRecord | None:
        """The wildcard part of :meth:`decide` for a very long path and many rules.

        Scanning a path of 100,000 characters once per wildcard rule adds up
        over thousands of rules. A rule needing a character the path does
        not have cannot match: the characters a bucket's rules need are each
        looked for once (``in``, a C scan), and rules needing a missing one
        are turned away without a scan.
        """
        buckets = [(-1, self._root)] if self._root else []
        buckets += [(i, self._buckets[i]) for i in self._wild.all(path)]
        for key, bucket in buckets:
            charsets = self._charsets.get(key)
            if charsets is None:
                each = [frozenset("".join(e[4].middle) + (e[4].last or "")) for e in bucket]
                charsets = self._charsets[key] = (frozenset().union(*each), each)
            needed_by_any, needed = charsets
            missing = {char for char in needed_by_any if char not in path}
            possible = compress(bucket, (chars.isdisjoint(missing) for chars in needed))
            best_rank, best = _scan(possible, path, best_rank, best)
        return best


def _scan(
    bucket: Iterable[_Wild], path: str, best_rank: int, best: RuleRecord | None
) -> tuple[int, RuleRecord | None]:
    """The bucket's first matching rule in rank order, if it ranks above ``best``."""
    for rank, shape, piece, offset, pattern, rule in bucket:
        if rank >= best_rank:
            break
        if shape == _FIND:
            if path.find(piece, offset) >= 0:
                return rank, rule
        elif shape == _ENDS:
            if path.endswith(piece) and len(path) - len(piece) >= offset:
                return rank, rule
        elif piece in path and pattern.matches(path):
            return rank, rule
    return best_rank, best
