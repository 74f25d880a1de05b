"""SPEC 5: the three precedence modes, on the spec's worked examples and their edges."""

from __future__ import annotations

import pytest

from scrapy_robotrules import Precedence, RobotRules, RobotsTxt
from scrapy_robotrules.engine.robots.precedence import rule_code, strategy_for

MODES: tuple[Precedence, ...] = ("most-specific", "first-match", "allow-first")


def decide(content: str, path: str, mode: Precedence) -> tuple[bool, int | None]:
    decision = RobotsTxt.parse(content).explain(path, "bot", mode)
    return decision.allowed, None if decision.rule is None else decision.rule.line


FOLDER = "User-agent: *\nDisallow: /folder1/\nAllow: /folder1/myfile.html\n"
CGI = "User-agent: *\nAllow: /\nDisallow: /cgi-bin\n"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("first-match", (False, 2)), ("allow-first", (True, 3)), ("most-specific", (True, 3))],
)
def test_worked_example_folder(mode: Precedence, expected: tuple[bool, int]) -> None:
    assert decide(FOLDER, "/folder1/myfile.html", mode) == expected


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("first-match", (True, 2)), ("allow-first", (True, 2)), ("most-specific", (False, 3))],
)
def test_worked_example_cgi_bin(mode: Precedence, expected: tuple[bool, int]) -> None:
    assert decide(CGI, "/cgi-bin/x", mode) == expected


def test_most_specific_tie_goes_to_allow_whatever_the_order() -> None:
    for content in (
        "User-agent: *\nDisallow: /x\nAllow: /x\n",
        "User-agent: *\nAllow: /x\nDisallow: /x\n",
    ):
        assert decide(content, "/x", "most-specific")[0]


def test_most_specific_counts_wildcards_and_anchor_as_one_octet() -> None:
    # "/a*" (3) beats "/a" (2); "/ab$" (4) beats "/ab" (3).
    assert decide("User-agent: *\nDisallow: /a\nAllow: /a*\n", "/ab", "most-specific") == (True, 3)
    assert decide("User-agent: *\nAllow: /ab\nDisallow: /ab$\n", "/ab", "most-specific") == (
        False,
        3,
    )


def test_most_specific_compares_normalised_lengths() -> None:
    # "/%7E" normalises to "/~" (2 octets): shorter than "/~a" (3).
    assert decide("User-agent: *\nDisallow: /~a\nAllow: /%7E\n", "/~a", "most-specific") == (
        False,
        2,
    )


def test_allow_first_any_allow_wins() -> None:
    content = "User-agent: *\nDisallow: /a/b/c\nAllow: /a\n"
    assert decide(content, "/a/b/c", "allow-first") == (True, 3)
    assert decide(content, "/a/b/c", "first-match") == (False, 2)


def test_wildcards_work_in_every_mode() -> None:
    content = "User-agent: *\nDisallow: /*.pdf$\n"
    for mode in MODES:
        assert decide(content, "/x/y.pdf", mode) == (False, 2)
        assert decide(content, "/x/y.pdf?z", mode) == (True, None)


def test_no_matching_rule_is_allowed_in_every_mode() -> None:
    for mode in MODES:
        assert decide("User-agent: *\nDisallow: /x\n", "/y", mode) == (True, None)


def test_modes_agree_when_one_rule_matches() -> None:
    content = "User-agent: *\nDisallow: /a\nAllow: /b\nDisallow: /c*d\n"
    for path in ("/a1", "/b1", "/cxd", "/z"):
        assert len({decide(content, path, mode) for mode in MODES}) == 1


def test_merged_groups_rank_across_groups() -> None:
    content = (
        "User-agent: bot\nDisallow: /a\n\nUser-agent: *\nAllow: /\n\nUser-agent: bot\nAllow: /a/b\n"
    )
    assert decide(content, "/a/b", "most-specific") == (True, 8)
    assert decide(content, "/a/b", "first-match") == (False, 2)


@pytest.mark.parametrize("bad", ["longest", "MOST-SPECIFIC", ""])
def test_unknown_mode_is_a_clear_error(bad: str) -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\n")
    with pytest.raises(ValueError, match=r"most-specific.*first-match.*allow-first"):
        robots.allowed("/", "bot", bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="precedence must be one of"):
        RobotRules("bot", precedence=bad)  # type: ignore[arg-type]


def test_unknown_agent_match_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="'token', 'substring'"):
        RobotsTxt.parse("").allowed("/", "bot", agent_match="exact")  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["most-specific", "first-match", "allow-first"])
def test_ranks_in_bulk_are_the_ranks_one_by_one(mode: Precedence) -> None:
    # A large file's index ranks its found rules with ranks(); each strategy
    # writes it apart from rank() for speed, so the two must agree.
    strategy = strategy_for(mode)
    rules = [
        (line, allow, priority)
        for line in (1, 2, 999_999)
        for allow in (False, True)
        for priority in (0, 1, 7, 500_000)
    ]
    codes = [rule_code(line, allow) for line, allow, _ in rules]
    priorities = [priority for _, _, priority in rules]
    expected = [strategy.rank(line, allow, priority) for line, allow, priority in rules]
    assert list(strategy.ranks(codes, priorities)) == expected
