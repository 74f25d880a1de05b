"""Properties of scrapy_robotrules.RobotsTxt that must hold for any input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.helpers.differential import (
    CRAWLER_AGENTS,
    ROBOTS_URLS,
    SCALE,
    groups,
    patterns,
    robots_documents,
    urls,
)
from tests.helpers.reference import (
    AGENT_MATCHES,
    PRECEDENCES,
    RULE_KEYS,
    is_robots_txt,
    read_lines,
    reference_matching_rules,
    reference_rule_matches,
)

MODES = [(p, m) for p in PRECEDENCES for m in AGENT_MATCHES]
FAST = settings(
    max_examples=300 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# Pieces of robots.txt syntax, glued together at random: noise that looks like robots.txt.
SYNTAX_PIECES = [
    b"User-agent:",
    b"user agent ",
    b"Disallow:",
    b"Allow:",
    b"Crawl-delay:",
    b"Request-rate:",
    b"Visit-time:",
    b"Sitemap:",
    b"Host:",
    b"*",
    b"$",
    b"%",
    b"%2",
    b"%C3%A9",
    b"/",
    b"?",
    b"#",
    b":",
    b" ",
    b"\t",
    b"\r",
    b"\n",
    b"\r\n",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\xe9",
    b"\xe3\x83\x84",
    b"0",
    b"1",
    b"9",
    b"60",
    b"/",
    b"-",
    b".",
    b"e",
    b"m",
    b"h",
    b"d",
    b"s",
    b"0600-0845",
    b"2359",
    b"http://example.com/",
    b"FooBot",
    b"\x00",
    b"\x0b",
    b"\x0c",
    b"\x85",
]
robots_like_bytes = st.lists(st.sampled_from(SYNTAX_PIECES), max_size=60).map(b"".join)
any_content = st.one_of(
    st.binary(max_size=2000),
    robots_like_bytes,
    st.text(max_size=500),
    robots_documents(),
)
any_agent = st.one_of(st.sampled_from(CRAWLER_AGENTS), st.text(max_size=20))
any_url = st.one_of(
    urls(),
    st.text(max_size=40),
    st.sampled_from(["", "http://[::1", "http://a:port/x", "//host/x", "?q", "*", "$", "%"]),
)


@pytest.fixture(scope="module")
def robots_cls() -> Any:
    module = pytest.importorskip("scrapy_robotrules")
    return module.RobotsTxt


def decisions(parsed: Any, url: str, agent: str) -> list[tuple[bool, Any]]:
    """(allowed, deciding rule) in every mode."""
    out = []
    for precedence, agent_match in MODES:
        allowed = parsed.allowed(url, agent, precedence=precedence, agent_match=agent_match)
        rule = parsed.explain(url, agent, precedence=precedence, agent_match=agent_match).rule
        out.append((allowed, None if rule is None else (rule.directive, rule.pattern, rule.line)))
    return out


# --------------------------------------------------------------------------
# Nothing raises, whatever the input.


@FAST
@given(
    content=any_content,
    robots_url=st.sampled_from([*ROBOTS_URLS, "https://example.com:8443/robots.txt"]),
    agent=any_agent,
    url=any_url,
)
def test_any_input_never_raises(
    robots_cls: Any, *, content: str | bytes, robots_url: str | None, agent: str, url: str
) -> None:
    parsed = robots_cls.parse(content, url=robots_url)
    for precedence, agent_match in MODES:
        allowed = parsed.allowed(url, agent, precedence=precedence, agent_match=agent_match)
        decision = parsed.explain(url, agent, precedence=precedence, agent_match=agent_match)
        assert isinstance(allowed, bool)
        assert decision.allowed == allowed
        str(decision)
    for agent_match in AGENT_MATCHES:
        delay = parsed.crawl_delay(agent, agent_match=agent_match)
        assert delay is None or delay >= 0
        parsed.request_rate(agent, agent_match=agent_match)
        parsed.visit_time(agent, agent_match=agent_match)
    assert all(isinstance(sitemap, str) for sitemap in parsed.sitemaps)
    assert parsed.host is None or isinstance(parsed.host, str)


# --------------------------------------------------------------------------
# A rule always matches the literal URL it names.

PATH_ALPHABET = [
    *"abcXYZ019/-._~:@!&'()+,;=?%[] \t\x0b\x0c\\\"<>^`{|}",
    "é",
    "ツ",
    "\x00",
    "\x1c",
    "\x85",
    "\u2028",
    "\U0001f916",
]
literal_paths = st.text(alphabet=PATH_ALPHABET, max_size=15).map(lambda rest: "/" + rest)


@FAST
@given(
    path=literal_paths,
    absolute=st.booleans(),
    agent=st.sampled_from(CRAWLER_AGENTS),
    as_bytes=st.booleans(),
    end=st.sampled_from(["\n", "\r\n", "\r", ""]),
)
def test_rule_matches_the_literal_url_it_names(
    robots_cls: Any, *, path: str, absolute: bool, agent: str, as_bytes: bool, end: str
) -> None:
    assume(not is_robots_txt(path))
    text = f"User-agent: *{end or chr(10)}Disallow: {path}{end}"
    content: str | bytes = text.encode("utf-8") if as_bytes else text
    url = "http://example.com" + path if absolute or path.startswith("//") else path
    parsed = robots_cls.parse(content)
    for precedence, agent_match in MODES:
        assert not parsed.allowed(url, agent, precedence=precedence, agent_match=agent_match), (
            text,
            url,
            precedence,
            agent_match,
        )


# --------------------------------------------------------------------------
# Adding a rule that does not match the URL never changes the decision.


@st.composite
def documents_as_lines(draw: st.DrawFn) -> list[str]:
    lines: list[str] = []
    for group in draw(st.lists(groups, max_size=4)):
        lines += group
    return lines


@FAST
@given(
    lines=documents_as_lines(),
    directive=st.sampled_from(["Allow", "Disallow"]),
    value=patterns,
    where=st.integers(min_value=0),
    robots_url=st.sampled_from(ROBOTS_URLS),
    agents=st.lists(st.sampled_from(CRAWLER_AGENTS), min_size=1, max_size=3, unique=True),
    url=urls(),
)
def test_adding_a_rule_that_does_not_match_changes_nothing(
    robots_cls: Any,
    *,
    lines: list[str],
    directive: str,
    value: str,
    where: int,
    robots_url: str | None,
    agents: list[str],
    url: str,
) -> None:
    new_line = f"{directive}: {value}"
    parsed_new = read_lines(new_line.encode("utf-8", "surrogateescape"))
    assume(not parsed_new or not reference_rule_matches(parsed_new[0].value, url, robots_url))
    before = "\n".join([*lines, ""])
    # Insert right after a rule line (or at the end): the group structure stays the same
    # (after a Crawl-delay between two User-agent lines, a rule would end the first
    # agent's run and split the group: SPEC 2).
    members = [
        line.number
        for line in read_lines(before.encode("utf-8", "surrogateescape"))
        if line.key in RULE_KEYS
    ]
    position = [*members, len(lines)][where % (len(members) + 1)]
    after = "\n".join([*lines[:position], new_line, *lines[position:], ""])
    old = robots_cls.parse(before.encode("utf-8", "surrogateescape"), url=robots_url)
    new = robots_cls.parse(after.encode("utf-8", "surrogateescape"), url=robots_url)
    for agent in agents:
        for precedence, agent_match in MODES:
            kwargs = {"precedence": precedence, "agent_match": agent_match}
            assert old.allowed(url, agent, **kwargs) == new.allowed(url, agent, **kwargs), (
                before,
                new_line,
                url,
                agent,
                precedence,
                agent_match,
            )


# --------------------------------------------------------------------------
# The three precedence modes agree when at most one rule matches.


@FAST
@given(
    lines=documents_as_lines(),
    robots_url=st.sampled_from(ROBOTS_URLS),
    agent=st.sampled_from(CRAWLER_AGENTS),
    agent_match=st.sampled_from(AGENT_MATCHES),
    url=urls(),
)
def test_modes_agree_when_at_most_one_rule_matches(
    robots_cls: Any,
    *,
    lines: list[str],
    robots_url: str | None,
    agent: str,
    agent_match: str,
    url: str,
) -> None:
    content = "\n".join([*lines, ""]).encode("utf-8", "surrogateescape")
    matching = reference_matching_rules(content, url, agent, agent_match, robots_url)
    assume(len(matching) <= 1)
    parsed = robots_cls.parse(content, url=robots_url)
    answers = {
        precedence: parsed.allowed(url, agent, precedence=precedence, agent_match=agent_match)
        for precedence in PRECEDENCES
    }
    assert len(set(answers.values())) == 1, (content, url, agent, agent_match, answers)


# --------------------------------------------------------------------------
# Decisions are deterministic: same answer twice, in any order, from any copy.


@FAST
@given(
    content=robots_documents(),
    robots_url=st.sampled_from(ROBOTS_URLS),
    queries=st.lists(st.tuples(st.sampled_from(CRAWLER_AGENTS), urls()), min_size=1, max_size=6),
    order=st.randoms(use_true_random=False),
)
def test_decisions_are_deterministic(
    robots_cls: Any,
    *,
    content: str | bytes,
    robots_url: str | None,
    queries: list[tuple[str, str]],
    order: Any,
) -> None:
    shared = robots_cls.parse(content, url=robots_url)
    first = {query: decisions(shared, *query) for query in queries}
    shuffled = list(queries)
    order.shuffle(shuffled)
    for query in shuffled:
        assert decisions(shared, *query) == first[query], (content, query)
        fresh = robots_cls.parse(content, url=robots_url)
        assert decisions(fresh, *query) == first[query], (content, query)
    for agent, _ in queries:
        for agent_match in AGENT_MATCHES:
            delay = shared.crawl_delay(agent, agent_match=agent_match)
            assert delay == shared.crawl_delay(agent, agent_match=agent_match)
            fresh = robots_cls.parse(content, url=robots_url)
            assert delay == fresh.crawl_delay(agent, agent_match=agent_match)
