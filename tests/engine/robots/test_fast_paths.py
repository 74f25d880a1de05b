"""The engine's fast paths answer as their plain references.

Each fast path of the robots engine has a plain reference, kept in
``tests/helpers/plain_references.py`` (``benchmarks/fast_paths.py`` counts
what each fast path saves over it). Each test here asks both the same
questions, on generated inputs and edge cases, and requires the same
answers. The percent-normalisation of long input is compared in
``test_urls.py``. Also: the most specific plain rule found at the longest
prefix against the walk of every prefix, and the per-agent view of the
default mode against views asked in other modes.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scrapy_robotrules import AgentMatch, Precedence, RobotsTxt
from scrapy_robotrules.engine.robots import robotstxt
from scrapy_robotrules.engine.robots.agents import AGENT_MATCH_STYLES
from scrapy_robotrules.engine.robots.groups import read_rules
from scrapy_robotrules.engine.robots.precedence import (
    MOST_SPECIFIC,
    PRECEDENCE_MODES,
    PrecedenceStrategy,
)
from scrapy_robotrules.engine.robots.rule_index import _needled_columns
from scrapy_robotrules.engine.robots.star_columns import (
    StarRules,
    _normalised,
    _normalised_tails,
    needs_cutting,
)
from scrapy_robotrules.engine.robots.urls import RESERVED, UNRESERVED, _path_of, request_path
from tests.helpers import plain_references
from tests.helpers.differential import (
    ROBOTS_URLS,
    SCALE,
    robots_documents,
    rule_values,
    urls,
    urls_near,
)

FAST = settings(
    max_examples=300 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
AGENTS = ["examplebot", "Googlebot/2.1", "FooBot"]

# Plain prefix rules over a small alphabet, so that paths share prefixes with
# them and with each other, and the same prefix is often written twice.
plain_values = st.text(alphabet="/ab.?", min_size=1, max_size=5).map(lambda v: "/" + v)
plain_rules = st.lists(
    st.tuples(st.sampled_from(["Allow", "Disallow"]), plain_values), min_size=1, max_size=12
)
paths = st.text(alphabet="/ab.?c", max_size=8).map(lambda p: "/" + p)


def plain_file(rules: list[tuple[str, str]]) -> RobotsTxt:
    lines = ["User-agent: *", *(f"{key}: {value}" for key, value in rules)]
    return RobotsTxt.parse("\n".join(lines) + "\n")


@FAST
@given(rules=plain_rules, asked=st.lists(paths, min_size=1, max_size=10))
def test_most_specific_stops_at_the_longest_prefix_as_the_whole_chain_says(
    rules: list[tuple[str, str]], asked: list[str]
) -> None:
    index = plain_file(rules)._index("bot", MOST_SPECIFIC, "token")
    strategy, prefixes, codes = index._strategy, index._prefixes, index._codes
    for path in asked:
        i = prefixes.longest(path.encode())
        if i >= 0:
            walked = PrecedenceStrategy.best_prefix_rule(strategy, prefixes, codes, i)
            assert strategy.best_prefix_rule(prefixes, codes, i) == walked


@FAST
@given(content=robots_documents(), url=urls(), agent=st.sampled_from(AGENTS))
def test_allowed_reads_the_url_as_request_path_does(
    content: str | bytes, url: str, agent: str
) -> None:
    robots = RobotsTxt.parse(content, "http://example.com/robots.txt")
    allowed = robots.allowed(url, agent)
    decision = RobotsTxt.parse(content, "http://example.com/robots.txt").explain(url, agent)
    assert (decision.allowed, decision.path) == (allowed, request_path(url))
    assert robots.explain(url, agent).allowed is allowed


@FAST
@given(
    content=robots_documents(),
    asked=st.lists(
        st.tuples(urls(), st.sampled_from(AGENTS), st.sampled_from(PRECEDENCE_MODES)),
        min_size=1,
        max_size=8,
    ),
)
def test_views_of_every_mode_answer_as_a_fresh_file(
    content: str | bytes, asked: list[tuple[str, str, Precedence]]
) -> None:
    # One file asked in turns, in the default mode (a view per agent) and
    # others (a view per agent and mode), against a fresh file per question.
    shared = RobotsTxt.parse(content)
    for url, agent, mode in asked:
        styles: tuple[AgentMatch, ...] = ("token", "substring")
        for style in styles:
            expected = RobotsTxt.parse(content).allowed(url, agent, mode, style)
            assert shared.allowed(url, agent, mode, style) is expected
            assert shared.explain(url, agent, mode, style).allowed is expected


def test_the_view_of_the_default_mode_is_not_taken_for_another() -> None:
    # "FooBot" is named by the group only as a substring; "/a" is decided by
    # the longest rule in most-specific mode, by the first one in first-match.
    robots = RobotsTxt.parse("User-agent: bot\nAllow: /\nDisallow: /a\n")
    asked: list[tuple[AgentMatch, Precedence, bool]] = [
        ("token", MOST_SPECIFIC, True),
        ("substring", MOST_SPECIFIC, False),
        ("substring", "first-match", True),
        ("token", "first-match", True),
        ("substring", MOST_SPECIFIC, False),
        ("token", MOST_SPECIFIC, True),
    ]
    for style, mode, allowed in asked:
        assert robots.allowed("/a", "FooBot", mode, style) is allowed, (style, mode)
        assert robots.explain("/a", "FooBot", mode, style).allowed is allowed, (style, mode)


# Rule values as the line regex cuts them (no "#": it starts a comment), or any octets.
VALUE_PIECES = [
    "/",
    "a",
    "%",
    "%4",
    "%41",
    "%2f",
    "%7E",
    "é",
    "ツ",
    "*",
    "$",
    " ",
    "\x00",
    "\udcff",
]
cut_values = st.one_of(
    st.lists(st.sampled_from(VALUE_PIECES), max_size=8).map(
        lambda pieces: "".join(pieces).encode("utf-8", "surrogateescape")
    ),
    st.binary(max_size=12).map(lambda octets: octets.replace(b"#", b"")),
)


@FAST
@given(values=st.lists(cut_values, max_size=12))
@example(values=[])
@example(values=[b""])
@example(values=[b"%4", b"1"])  # an escape is not read across two values
@example(values=[b"%", b"41"])
@example(values=[b"\xc3", b"\xa9"])  # nor a character's octets
def test_values_normalised_together_as_one_by_one(values: list[bytes]) -> None:
    assert _normalised(values) == plain_references.normalised(values)


@FAST
@given(prefixes=st.lists(cut_values, max_size=8), data=st.data())
@example(prefixes=[], data=None)
@example(prefixes=[b"/a"], data=None)
def test_values_to_cut_are_found_as_one_by_one(prefixes: list[bytes], data: Any) -> None:
    pieces = [b"x"] * len(prefixes)
    if data is not None:
        pieces = data.draw(st.lists(cut_values, min_size=len(prefixes), max_size=len(prefixes)))
    lines = list(range(len(prefixes)))
    rules = StarRules(
        lines, [False] * len(lines), prefixes, [b"*"] * len(lines), pieces, [b""] * len(lines)
    )
    assert needs_cutting(rules) is plain_references.needs_cutting(rules)


# What the line regex lets through after a first star: kept characters but "#",
# "%", other stars, octets of non-ASCII (and no "$": it cuts a final one off).
CUT_OCTETS = {*(UNRESERVED + RESERVED + "%*").encode(), *range(0x80, 0x100)} - {ord("#")}
cut_tails = st.one_of(
    st.lists(
        st.sampled_from([p for p in VALUE_PIECES if p not in ("$", " ", "\x00")]), max_size=8
    ).map(lambda pieces: "".join(pieces).encode("utf-8", "surrogateescape")),
    st.binary(max_size=12).map(lambda octets: bytes(o for o in octets if o in CUT_OCTETS)),
).map(lambda tail: tail + b"*")


@FAST
@given(tails=st.lists(cut_tails, max_size=8))
@example(tails=[b"*"])
@example(tails=[b"%4*1", b"*%41*"])
@example(tails=[b"a*\xc3", b"\xa9*"])
def test_tails_normalised_together_as_piece_by_piece(tails: list[bytes]) -> None:
    counts = [tail.count(b"*") + 1 for tail in tails]
    expected = plain_references.normalised_tails(tails, counts)
    assert _normalised_tails(tails, counts) == expected


# Many wildcard rules of one star or several, with and without a needle,
# escapes and non-ASCII: what an automaton is built from.
star_rule_lines = st.lists(
    st.builds(
        lambda key, form, a, b: f"{key}: {form.format(a, b)}",
        st.sampled_from(["Allow", "Disallow", "disallow"]),
        st.sampled_from(
            ["/*{}", "/{}*{}", "/*{}$", "/{}*", "/{}$", "/*{}*{}", "/{}*{}*$", "*{}*{}$", "/é{}*{}"]
        ),
        st.text(alphabet=[*"ab%2F7e", "é"], max_size=4),
        st.text(alphabet=[*"ab%2F7e", "ツ"], max_size=4),
    ),
    max_size=40,
)


@FAST
@given(lines=star_rule_lines, robots_url=st.sampled_from(ROBOTS_URLS))
@example(lines=[], robots_url=None)
@example(lines=["Disallow: /a*", "Allow: /b$"], robots_url=None)  # no needle at all
@example(lines=["Disallow: /*a", "Allow: /x*b$", "Disallow: /*c*d*e"], robots_url=None)
def test_automaton_columns_made_as_rule_by_rule(lines: list[str], robots_url: str | None) -> None:
    body = "".join("\n" + line for line in lines).encode("utf-8", "surrogateescape")
    rules = read_rules(body, 2, robots_url)
    wild = [rule for rule in rules.wild if rule[2].needle]
    columns, rest, rest_many = _needled_columns(wild, [rules.stars], [rules.many])
    plain, plain_rest, plain_rest_many = plain_references.needled_columns(
        wild, [rules.stars], [rules.many]
    )
    assert columns == plain
    # The same rules left over (a group left empty or not).
    assert [group for group in rest if group.lines] == plain_rest
    assert [group for group in rest_many if group.lines] == plain_rest_many


@FAST
@given(content=robots_documents(), robots_url=st.sampled_from(ROBOTS_URLS), data=st.data())
def test_rules_read_in_columns_decide_as_read_line_by_line(
    content: str | bytes, robots_url: str | None, data: st.DataObject
) -> None:
    values = rule_values(content)
    near = urls_near(values) if values else urls()
    asked = data.draw(st.lists(st.one_of(urls(), near), min_size=1, max_size=6))
    fast = RobotsTxt.parse(content, robots_url)
    plain = RobotsTxt.parse(content, robots_url)
    for body, line in zip(fast._bodies, fast._body_lines, strict=True):
        by_columns, by_lines = (
            read_rules(body, line, robots_url),
            plain_references.read_rules(body, line, robots_url),
        )
        # The same plain prefix rules; the others, all wildcard rules, decide alike below.
        for columns, lines in (
            (by_columns.allow, by_lines.allow),
            (by_columns.disallow, by_lines.disallow),
        ):
            assert sorted(zip(*columns, strict=True)) == sorted(zip(*lines, strict=True))
    questions = [(url, mode) for url in asked for mode in PRECEDENCE_MODES]
    decisions = [fast.explain(url, "FooBot", mode) for url, mode in questions]
    with mock.patch.object(robotstxt, "read_rules", plain_references.read_rules):
        expected = [plain.explain(url, "FooBot", mode) for url, mode in questions]
    assert [(d.allowed, d.rule) for d in decisions] == [(d.allowed, d.rule) for d in expected]


@FAST
@given(
    asked=st.lists(st.one_of(urls(), st.sampled_from(["/", "", "//h/p", "http://h"])), max_size=8)
)
def test_the_url_kept_reads_as_the_url_read_again(asked: list[str]) -> None:
    # Each URL, and each asked twice in a row.
    twice = [url for url in asked for _ in range(2)]
    expected = [plain_references.request_path(url) for url in twice]
    assert [request_path(url) for url in twice] == expected


@FAST
@given(url=urls())
@example(url="https://example.com")
@example(url="https://example.com?q")
@example(url="https://example.com/a%7e")
@example(url="HTTP://Example.COM/a b")
@example(url="//host/x")
@example(url="/robots.txt")
def test_a_clean_url_reads_as_the_plain_reading(url: str) -> None:
    assert _path_of(url) == plain_references.path_of(url)


@FAST
@given(
    content=robots_documents(),
    asked=st.lists(
        st.tuples(
            urls(),
            st.sampled_from(AGENTS),
            st.sampled_from(PRECEDENCE_MODES),
            st.sampled_from(AGENT_MATCH_STYLES),
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_the_file_decides_as_its_plain_decision(
    content: str | bytes, asked: list[tuple[str, str, Precedence, AgentMatch]]
) -> None:
    fast, plain = RobotsTxt.parse(content), RobotsTxt.parse(content)
    for url, agent, mode, style in asked:
        path = request_path(url)
        expected = plain_references.decide(plain, path, agent, mode, style)
        assert fast._decide(path, agent, mode, style) == expected


@settings(max_examples=200 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    content=robots_documents(),
    agent=st.sampled_from(["examplebot", "Googlebot/2.1", "", "*", "FooBot"]),
    style=st.sampled_from(AGENT_MATCH_STYLES),
)
def test_groups_selected_from_columns_are_those_select_names(
    content: str | bytes, agent: str, style: AgentMatch
) -> None:
    robots = RobotsTxt.parse(content)
    assert robots._selected(agent, style) == plain_references.selected(robots, agent, style)
