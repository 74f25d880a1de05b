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
from collections.abc import Iterable

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


_ORDER = 1 << 32
_MAX_PRIORITY = 1 << 40
_MODES = {MOST_SPECIFIC: 0, FIRST_MATCH: 1, ALLOW_FIRST: 2}


def check_precedence(mode: str) -> str:
    """``mode`` itself, or ``ValueError`` naming the valid choices."""
    if mode not in _MODES:
        choices = ", ".join(repr(m) for m in PRECEDENCE_MODES)
        raise ValueError(f"precedence must be one of {choices}, not {mode!r}")
    return mode


_NO_RANK = 1 << 200


class RuleIndex:
    """The rules of the groups that apply to one crawler, ranked by one mode."""

    __slots__ = ("_chain_best", "_parents", "_prefixes", "_wild")

    def __init__(self, rules: Iterable[RuleRecord], mode: str) -> None:
        kind = _MODES[mode]
        best_by_prefix: dict[str, tuple[int, RuleRecord]] = {}
        wild: list[tuple[int, str, Pattern, RuleRecord]] = []
        for rule in rules:
            line, allow, _, matcher = rule
            if matcher is None:
                continue
            if kind == 0:
                priority = len(matcher) if isinstance(matcher, str) else matcher.priority
                rank = ((_MAX_PRIORITY - priority) * 2 + (not allow)) * _ORDER + line
            elif kind == 1:
                rank = line
            else:
                rank = (not allow) * _ORDER + line
            if isinstance(matcher, str):
                current = best_by_prefix.get(matcher)
                if current is None or rank < current[0]:
                    best_by_prefix[matcher] = (rank, rule)
            else:
                wild.append((rank, matcher.needle, matcher, rule))
        wild.sort(key=lambda item: item[0])
        prefixes = sorted(best_by_prefix)
        parents: list[int] = []
        chain_best: list[tuple[int, RuleRecord]] = []
        stack: list[int] = []
        for i, prefix in enumerate(prefixes):
            while stack and not prefix.startswith(prefixes[stack[-1]]):
                stack.pop()
            own = best_by_prefix[prefix]
            if stack:
                parent = stack[-1]
                parents.append(parent)
                inherited = chain_best[parent]
                chain_best.append(inherited if inherited[0] < own[0] else own)
            else:
                parents.append(-1)
                chain_best.append(own)
            stack.append(i)
        self._prefixes = prefixes
        self._parents = parents
        self._chain_best = chain_best
        self._wild = wild

    def decide(self, path: str) -> RuleRecord | None:
        """The deciding rule for the normalised ``path``, or ``None`` if none matches."""
        best_rank = _NO_RANK
        best: RuleRecord | None = None
        prefixes = self._prefixes
        if prefixes:
            i = bisect_right(prefixes, path) - 1
            parents = self._parents
            while i >= 0:
                if path.startswith(prefixes[i]):
                    best_rank, best = self._chain_best[i]
                    break
                i = parents[i]
        for rank, needle, matcher, rule in self._wild:
            if rank >= best_rank:
                break
            if needle in path and matcher.matches(path):
                return rule
        return best
