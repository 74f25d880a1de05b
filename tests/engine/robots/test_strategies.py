"""SPEC 5 as strategy objects: each mode ranks matching rules its own way, the index asks it."""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots.patterns import Pattern
from scrapy_robotrules.engine.robots.precedence import (
    NO_RULE,
    PRECEDENCE_MODES,
    AllowFirst,
    FirstMatch,
    MostSpecific,
    PlainRules,
    PrecedenceStrategy,
    code_allows,
    code_line,
    rule_code,
    strategy_for,
)
from scrapy_robotrules.engine.robots.prefixes import PrefixSet
from scrapy_robotrules.engine.robots.rule_index import RuleIndex

STRATEGIES = [strategy_for(mode) for mode in PRECEDENCE_MODES]


def test_each_mode_has_its_strategy() -> None:
    assert [type(s) for s in STRATEGIES] == [MostSpecific, FirstMatch, AllowFirst]
    assert [s.name for s in STRATEGIES] == list(PRECEDENCE_MODES)
    with pytest.raises(ValueError, match="precedence must be one of 'most-specific'"):
        strategy_for("longest")


def test_most_specific_ranks_length_then_allow_then_line() -> None:
    rank = MostSpecific().rank
    assert rank(9, False, 10) < rank(1, True, 9)  # longer wins, wherever it stands
    assert rank(9, True, 10) < rank(1, False, 10)  # equal length: Allow wins
    assert rank(1, True, 10) < rank(2, True, 10)  # then the earlier line


def test_first_match_ranks_by_line_alone() -> None:
    rank = FirstMatch().rank
    assert rank(1, False, 1) < rank(2, True, 50)
    assert rank(3, True, 9) == rank(3, False, 1)


def test_allow_first_ranks_any_allow_above_any_disallow() -> None:
    rank = AllowFirst().rank
    assert rank(900, True, 1) < rank(1, False, 50)
    assert rank(1, True, 1) < rank(2, True, 50)


def test_ranks_fit_an_index_array() -> None:
    # Ranks are kept in array("q"): the largest line and pattern length a file can have.
    for strategy in STRATEGIES:
        for line in (0, (1 << 20) - 1):
            for allow in (False, True):
                for priority in (0, 512_000):
                    array("q", [strategy.rank(line, allow, priority)])


def test_rules_written_with_the_same_prefix() -> None:
    allow = [([b"/a"], [rule_code(5, True)])]
    disallow = [([b"/a", b"/b", b"/b"], [rule_code(2, False), rule_code(3, False), 9 * 2])]
    assert FirstMatch().best_per_prefix(allow, disallow) == {b"/a": 4, b"/b": 6}
    for strategy in (MostSpecific(), AllowFirst()):
        assert strategy.best_per_prefix(allow, disallow) == {b"/a": 11, b"/b": 6}


prefix_sets = st.lists(
    st.text(alphabet="/ab", min_size=1, max_size=5).map(lambda t: ("/" + t).encode()),
    min_size=1,
    max_size=12,
    unique=True,
).map(sorted)


@given(prefixes=prefix_sets, path=st.text(alphabet="/ab", max_size=8), data=st.data())
def test_the_best_prefix_rule_is_the_best_ranked_on_the_chain(
    prefixes: list[bytes], path: str, data: st.DataObject
) -> None:
    """A strategy that stops early (most-specific) finds what a walk of the whole chain finds."""
    lines = data.draw(st.permutations(range(1, len(prefixes) + 1)))
    allows = data.draw(st.lists(st.booleans(), min_size=len(prefixes), max_size=len(prefixes)))
    codes = array("i", map(rule_code, lines, allows))
    plain = PrefixSet(prefixes)
    text = ("/" + path).encode()
    i = plain.longest(text)
    if i < 0:
        return
    for strategy in STRATEGIES:
        matching = [j for j, p in enumerate(prefixes) if text.startswith(p)]
        expected = min(
            (strategy.rank(code_line(codes[j]), code_allows(codes[j]), len(prefixes[j])), codes[j])
            for j in matching
        )
        assert strategy.best_prefix_rule(plain, codes, i) == expected
        assert PrecedenceStrategy.best_prefix_rule(strategy, plain, codes, i) == expected


class LastMatch(PrecedenceStrategy):
    """Not a mode of SPEC 5: the last matching line decides. Shows the index asks its strategy."""

    __slots__ = ()
    name = "last-match"

    def rank(self, line: int, allow: bool, priority: int) -> int:
        return -line

    def best_per_prefix(
        self, allow: Sequence[PlainRules], disallow: Sequence[PlainRules]
    ) -> dict[bytes, int]:
        return dict(
            sorted((p, c) for v, cs in (*allow, *disallow) for p, c in zip(v, cs, strict=True))
        )


def no_pattern(line: int) -> Pattern:
    raise AssertionError(line)


@pytest.mark.parametrize(
    ("path", "line"),
    [("/a/b/c", 5), ("/a/b", 4), ("/a/x", 2), ("/x.php", 6), ("/y", NO_RULE)],
)
def test_the_index_asks_its_strategy(path: str, line: int) -> None:
    content = (
        "User-agent: *\nDisallow: /a\nAllow: /a/b/c\nDisallow: /a/b\nAllow: /a/b/c\n"
        "Disallow: /*.php\n"
    )
    group = RobotsTxt.parse(content).groups[0]
    rules = group.rules(None)
    index = RuleIndex(
        [rules.allow],
        [rules.disallow],
        rules.wild,
        [rules.stars],
        LastMatch(),
        pattern_at=no_pattern,
    )
    code = index.decide(path)
    assert code == NO_RULE if line == NO_RULE else code_line(code) == line
