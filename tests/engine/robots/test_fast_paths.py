"""The engine's fast paths answer as the general paths they stand for.

Each test asks a fast path and its slow counterpart the same question and
requires the same answer: the most specific plain rule found at the longest
prefix against the walk of every prefix, ``allowed()``'s inlined URL reading against
:func:`request_path`, the per-agent view of the default mode against views
asked in other modes.
"""

from __future__ import annotations

from typing import Any

from helpers.differential import SCALE, robots_documents, urls
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_robotrules import AgentMatch, Precedence, RobotsTxt
from scrapy_robotrules.engine.robots.precedence import (
    MOST_SPECIFIC,
    PRECEDENCE_MODES,
    PrecedenceStrategy,
)
from scrapy_robotrules.engine.robots.urls import request_path

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
    strategy, prefixes, codes = index._strategy, index._plain, index._codes
    for path in asked:
        i = prefixes.longest(path.encode())
        if i >= 0:
            walked = PrecedenceStrategy.best_plain(strategy, prefixes, codes, i)
            assert strategy.best_plain(prefixes, codes, i) == walked


class Recording(RobotsTxt):
    """A file that notes the path each question reaches the core with."""

    __slots__ = ("paths",)
    paths: list[str]

    def _decide(
        self, path: str, agent: str, precedence: Precedence, agent_match: AgentMatch
    ) -> int:
        self.paths.append(path)
        return super()._decide(path, agent, precedence, agent_match)


@FAST
@given(content=robots_documents(), url=urls(), agent=st.sampled_from(AGENTS))
def test_allowed_reads_the_url_as_request_path_does(
    content: str | bytes, url: str, agent: str
) -> None:
    robots: Any = Recording.parse(content, "http://example.com/robots.txt")
    robots.paths = []
    allowed = robots.allowed(url, agent)
    assert robots.paths == [request_path(url)]
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
