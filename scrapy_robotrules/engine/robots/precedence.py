"""Which matching rule decides (SPEC 5): the three precedence modes, one strategy object each.

A strategy owns what differs between modes, as google/robotstxt's
``RobotsMatchStrategy`` does: how a matching rule ranks (the lowest rank
decides), which of the rules written with the very same prefix wins, and
when the search through plain prefix rules may stop early. The machinery
that finds matching rules fast (:mod:`.rule_index`) is the same for every mode
and asks the strategy.

``most-specific`` (RFC 9309, Google and Bing today)
    longest normalised pattern; on equal length ``Allow`` wins. This is why
    ``Allow: /`` then ``Disallow: /cgi-bin`` keeps crawlers out of
    ``/cgi-bin/x``: the webmaster's more precise line is the one meant.
``first-match`` (1994 spec, 1996 draft)
    the first matching rule in file order; ``/cgi-bin/x`` is allowed above.
``allow-first`` (the legacy "Google reads every Allow first" description)
    any matching ``Allow``, else any matching ``Disallow``.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, ClassVar, Final, Literal, TypeAlias

if TYPE_CHECKING:
    from scrapy_robotrules.engine.robots.prefixes import PrefixSet

__all__ = [
    "ALLOW_FIRST",
    "FIRST_MATCH",
    "MOST_SPECIFIC",
    "NO_RANK",
    "NO_RULE",
    "PRECEDENCE_MODES",
    "AllowFirst",
    "FirstMatch",
    "MostSpecific",
    "PlainRules",
    "Precedence",
    "PrecedenceStrategy",
    "Rule",
    "check_precedence",
    "code_allows",
    "code_line",
    "rule_code",
    "strategy_for",
]

Precedence: TypeAlias = Literal["most-specific", "first-match", "allow-first"]
"""The precedence modes, as a type: a type checker rejects ``"most_specific"``."""

MOST_SPECIFIC: Final = "most-specific"
FIRST_MATCH: Final = "first-match"
ALLOW_FIRST: Final = "allow-first"
PRECEDENCE_MODES: tuple[Precedence, ...] = (MOST_SPECIFIC, FIRST_MATCH, ALLOW_FIRST)


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
"""The code that says no rule matches (and, as ``-1 & 1 == 1``, that the path is allowed)."""


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
    """Whether the rule of ``code`` allows; :data:`NO_RULE` allows too."""
    return bool(code & 1)


PlainRules = tuple[Sequence[bytes], Sequence[int]]
"""Plain rules of one directive as read: normalised (ASCII) prefixes and codes, in file order."""

NO_RANK = 1 << 200
"""A rank above every rule's: what a search starts from."""
_ORDER = 1 << 20  # above any line number a 500 KiB file can have
_MAX_PRIORITY = 1 << 22  # above any normalised pattern length
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


class PrecedenceStrategy:
    """One precedence mode: how a matching rule ranks, and when a search may stop early.

    Ranks are ints, the lowest decides; a search over rules sorted by rank
    stops at the first match, or once no rule left can rank below the best
    found. Ranks fit in 64 bits, so an index can keep them in an array.
    """

    __slots__ = ()
    name: ClassVar[str]

    def rank(self, line: int, allow: bool, priority: int) -> int:
        """The rank of a matching rule: its ``line``, verdict and ``priority``.

        ``priority`` is the length in octets of the normalised pattern,
        ``*`` and ``$`` counting one each (SPEC 5).
        """
        raise NotImplementedError

    def ranks(self, codes: Sequence[int], priorities: Sequence[int]) -> array[int]:
        """:meth:`rank` of many rules, given their codes: what a large file's index ranks by."""
        rank = self.rank
        return array(
            "q", [rank(c >> 1, bool(c & 1), p) for c, p in zip(codes, priorities, strict=True)]
        )

    def best_per_prefix(
        self, allow: Sequence[PlainRules], disallow: Sequence[PlainRules]
    ) -> dict[bytes, int]:
        """For each plain prefix, the code of the rule that wins among those written with it.

        By default ``Allow`` wins, then the earliest line. Filled by dict
        updates in C (a later entry overrides, so lists are fed newest first
        and ``Allow`` last): this is the hot loop of a large file's first check.
        """
        best: dict[bytes, int] = {}
        for rules in (disallow, allow):
            for values, codes in reversed(rules):
                best.update(zip(reversed(values), reversed(codes), strict=True))
        return best

    def best_prefix_rule(
        self, prefixes: PrefixSet[bytes], codes: array[int], i: int
    ) -> tuple[int, int]:
        """(rank, code) of the best rule without wildcards for a path whose longest prefix is ``i``.

        Every prefix the path starts with lies on ``i``'s chain of parents,
        so the chain is walked to its end.
        """
        items = prefixes.items
        best = codes[i]
        best_rank = self.rank(best >> 1, bool(best & 1), len(items[i]))
        i = prefixes.parent(i)
        while i >= 0:
            code = codes[i]
            rank = self.rank(code >> 1, bool(code & 1), len(items[i]))
            if rank < best_rank:
                best_rank, best = rank, code
            i = prefixes.parent(i)
        return best_rank, best

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class MostSpecific(PrecedenceStrategy):
    """The longest pattern decides; on equal length ``Allow`` wins, then the earliest line."""

    __slots__ = ()
    name = MOST_SPECIFIC

    def rank(self, line: int, allow: bool, priority: int) -> int:
        return ((_MAX_PRIORITY - priority) * 2 + (not allow)) * _ORDER + line

    def best_prefix_rule(
        self, prefixes: PrefixSet[bytes], codes: array[int], i: int
    ) -> tuple[int, int]:
        """The longest matching prefix is the most specific plain rule: the search stops there."""
        code = codes[i]
        return self.rank(code_line(code), code_allows(code), len(prefixes.items[i])), code


class FirstMatch(PrecedenceStrategy):
    """The earliest matching line decides, whatever it says."""

    __slots__ = ()
    name = FIRST_MATCH

    def rank(self, line: int, allow: bool, priority: int) -> int:
        return line

    def best_per_prefix(
        self, allow: Sequence[PlainRules], disallow: Sequence[PlainRules]
    ) -> dict[bytes, int]:
        newest_first = sorted(
            chain.from_iterable(
                zip(codes, values, strict=True) for values, codes in (*allow, *disallow)
            ),
            reverse=True,
        )
        return dict(zip(map(_SECOND, newest_first), map(_FIRST, newest_first), strict=True))


class AllowFirst(PrecedenceStrategy):
    """Any matching ``Allow`` decides (the earliest), else the earliest matching ``Disallow``."""

    __slots__ = ()
    name = ALLOW_FIRST

    def rank(self, line: int, allow: bool, priority: int) -> int:
        return (not allow) * _ORDER + line


_STRATEGIES: dict[str, PrecedenceStrategy] = {
    s.name: s for s in (MostSpecific(), FirstMatch(), AllowFirst())
}


def check_precedence(mode: str) -> Precedence:
    """``mode`` itself, or ``ValueError`` naming the valid choices.

    The runtime check behind the :data:`Precedence` type, for untyped callers
    and values read from settings or the command line.
    """
    for known in PRECEDENCE_MODES:
        if mode == known:
            return known
    raise _unknown(mode)


def strategy_for(mode: str) -> PrecedenceStrategy:
    """The strategy of the mode named ``mode``, or ``ValueError`` naming the valid choices."""
    strategy = _STRATEGIES.get(mode)
    if strategy is None:
        raise _unknown(mode)
    return strategy


def _unknown(mode: str) -> ValueError:
    choices = ", ".join(repr(m) for m in PRECEDENCE_MODES)
    return ValueError(f"precedence must be one of {choices}, not {mode!r}")
