"""Checks and first checks on ordinary files do work in proportion to what they need.

The work is counted in its own units, never timed: buckets walked and rows
tried by a check, rules ranked and lines read again by a first check,
searches of a file's text, group ends read to
select groups, URLs read, searches of an index. Inputs and data are
instrumented to count them (list and str subclasses, wrapped compiled
patterns), so a check that walked every bucket, or read a line again per
rule, shows as a failure. The decisions themselves are the differential
and conformance tests' to check.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots import groups, reading, robotstxt, signal_lines, urls
from scrapy_robotrules.engine.robots.precedence import MOST_SPECIFIC, PRECEDENCE_MODES, strategy_for
from scrapy_robotrules.engine.robots.rule_index import RuleIndex
from tests.helpers.differential import SCALE

pytestmark = pytest.mark.performance


class Reads(list[Any]):
    """A column that counts the items read from it one at a time (a bisection's too)."""

    reads = 0

    def __getitem__(self, key: Any) -> Any:
        if not isinstance(key, slice):
            self.reads += 1
        return super().__getitem__(key)


WILD = (
    "User-agent: *\n"
    "Disallow: /a\n"
    "Allow: /a/b/*.html$\n"
    "Disallow: /a/b/c*x\n"
    "Disallow: /a/*?\n"
    "Disallow: /*.php$\n"
    "Disallow: /*session\n"
    "Disallow: /q*\n"
)


def test_a_check_walks_only_the_buckets_its_path_starts_with() -> None:
    # Four buckets apply to "/a/b/cd.html" ("", "/a/", "/a/b/", "/a/b/c"),
    # none of the forty "/z<i>/": a check reads the keys of the buckets on
    # its path's chain (and one more where it starts, and a bisection's),
    # and tries the rows of those buckets only.
    others = "".join(f"Disallow: /z{i}/*x\n" for i in range(40))
    for mode in PRECEDENCE_MODES:
        index = RobotsTxt.parse(WILD + others)._index("bot", mode, "token")
        wild = index._wild
        assert wild is not None
        keys = wild._keys
        for path in ("/a/b/cd.html", "/a/b/cx", "/a/b/c.php?session", "/z"):
            wild._keys = Reads(keys)
            wild._pieces = pieces = Reads(wild._pieces)
            index.decide(path)
            on_chain = [b for b, key in enumerate(keys) if path.startswith(key)]
            bisection = math.ceil(math.log2(len(keys) + 1))
            assert wild._keys.reads <= len(on_chain) + 1 + bisection, (mode, path)
            rows = sum(wild._starts[b + 1] - wild._starts[b] for b in on_chain)
            assert pieces.reads <= rows, (mode, path)
            wild._keys, wild._pieces = keys, list(pieces)


def test_wildcard_buckets_decide_as_the_patterns_do() -> None:
    robots = RobotsTxt.parse(WILD)
    expected = {
        "/a/b/cd.html": True,
        "/a/b/cx": False,
        "/a/b/c.php": False,
        "/a/b/x.html": True,
        "/a/b/x.html?": False,
        "/a/x?": False,
        "/b/session": False,
        "/q": False,
        "/z": True,
    }
    for path, allowed in expected.items():
        assert robots.allowed(path, "bot", MOST_SPECIFIC) is allowed, path


class Passes(tuple[str, ...]):
    """A file's User-agent values that count the passes taken over them, and single reads."""

    passes = 0
    reads = 0

    def __iter__(self) -> Any:
        self.passes += 1
        return super().__iter__()

    def __getitem__(self, key: Any) -> Any:
        self.reads += 1
        return super().__getitem__(key)


def test_groups_are_selected_in_one_pass_over_the_user_agent_lines() -> None:
    # One pass over the User-agent lines, then each selected group found by
    # bisecting the groups' ends: not every group looked at in turn.
    text = "".join(f"User-agent: bot{i}\nUser-agent: *\nDisallow: /{i}\n\n" for i in range(50))
    robots = RobotsTxt.parse(text + "User-agent: examplebot\nDisallow: /\n")
    ends = robots._agent_ends
    bisection = math.ceil(math.log2(len(ends) + 1))
    for agent, count in (("examplebot/1.0", 1), ("bot7", 1), ("otherbot", 50)):
        values = robots._agents = Passes(robots._agents)
        robots._agent_ends = read = Reads(ends)  # type: ignore[assignment]
        assert len(robots._selected(agent, "token")) == count
        assert (values.passes, values.reads) == (1, 0)
        # Each User-agent line naming the crawler (once per group here) bisects the ends.
        assert read.reads <= count * bisection, agent


class Path(str):
    """A path that counts the searches made of it by ``find`` and ``endswith`` (not ``in``)."""

    calls = 0

    def find(self, *args: Any) -> int:
        type(self).calls += 1
        return super().find(*args)

    def endswith(self, *args: Any) -> bool:
        type(self).calls += 1
        return super().endswith(*args)


def test_wildcard_rows_whose_piece_the_path_lacks_cost_no_search_of_the_path() -> None:
    rules = "".join(f"Disallow: /*word{i}\nDisallow: /a/*.ext{i}$\n" for i in range(20))
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /*/foo\n" + rules)
    for mode in PRECEDENCE_MODES:
        index = robots._index("bot", mode, "token")
        assert index._wild is not None
        Path.calls = 0
        assert index.decide(Path("/a/b/c.html?q=1")) == -1
        assert Path.calls == 0
    # The piece must still be found after the prefix: "/foo" holds "/foo"
    # only where the prefix "/" stands.
    assert robots.allowed("/foo", "bot")
    assert not robots.allowed("/x/foo", "bot")
    assert not robots.allowed("/a/b.ext7", "bot")
    assert robots.allowed("/a/b.ext7x", "bot")


KNOWN_LINE = re.compile(b"\n(?:" + reading._line(tuple(reading._SPELLINGS)) + b")")
LINES = st.lists(
    st.sampled_from(
        [
            "Disallow: /a",
            "disallow /x",
            "  allow:",
            "# c",
            "",
            " \t",
            "User agent: x",
            "useragent bot",
            "<html>",
            "foo bar",
            "foo: bar",
            "Crawl delay 5",
            "sitemap: x",
            "host h",
            "\t#x",
            "a b c",
            "user agent x y",
            "Disallow /a b",
            "Request-rate: 1/5",
        ]
    )
    | st.text(alphabet=" \t#:abdlow-\x0b", max_size=12),
    max_size=12,
)


@settings(max_examples=300 * SCALE, deadline=None)
@given(lines=LINES, cut=st.tuples(st.integers(0, 200), st.integers(0, 200)))
def test_unknown_lines_are_counted_in_one_pass_as_line_by_line(
    lines: list[str], cut: tuple[int, int]
) -> None:
    buf = "".join("\n" + line for line in lines).encode() + b"\n"
    start, end = sorted(cut)
    expected = 0
    for at in (i for i in range(start, min(end, len(buf))) if buf[i : i + 1] == b"\n"):
        following = buf.find(b"\n", at + 1)
        line = buf[at + 1 : min(end, len(buf) if following < 0 else following)]
        content = line.lstrip(b" \t\v\f")[:1] not in (b"", b"#")
        expected += content and KNOWN_LINE.match(b"\n" + line) is None
    assert reading.count_unknown(buf, start, end) == expected


class Searches:
    """A compiled pattern that counts its searches."""

    def __init__(self, pattern: re.Pattern[bytes]) -> None:
        self.pattern = pattern
        self.count = 0

    def search(self, *args: Any) -> re.Match[bytes] | None:
        self.count += 1
        return self.pattern.search(*args)


def test_a_run_of_user_agent_lines_is_read_without_a_search_per_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    members, rules = Searches(reading._MEMBER_LINES), Searches(reading._RULE_LINES)
    monkeypatch.setattr(reading, "_MEMBER_LINES", members)
    monkeypatch.setattr(reading, "_RULE_LINES", rules)
    agents = "".join(f"User-agent: bot{i}\n" for i in range(30))
    robots = RobotsTxt.parse(agents + "Crawl-delay: 2\nAllow: /\n\n" + agents + "Disallow: /a\n")
    # One search for each group's first member line, and one for a rule
    # line after the first group's Crawl-delay: not one per User-agent line.
    assert (members.count, rules.count) == (2, 1)
    assert len(robots.groups) == 2
    assert not robots.allowed("/a", "bot7")
    assert robots.crawl_delay("bot7") == 2


def test_a_page_that_names_content_type_is_not_read_for_usage_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scans: list[bytes] = []

    class Lines:
        def finditer(self, buf: bytes, *args: Any) -> Any:
            scans.append(buf)
            return usage.finditer(buf, *args)

    usage = signal_lines._USAGE_LINES
    monkeypatch.setattr(signal_lines, "_USAGE_LINES", Lines())
    page = b'<html><head>\n<meta http-equiv="Content-Type" content="text/html">\n' * 50
    assert RobotsTxt.parse(page).usage_lines == ()
    assert scans == []
    robots = RobotsTxt.parse(page + b"Content-Usage: train-ai=n\n")
    assert [key for _, key, _ in robots.usage_lines] == ["content-usage"]
    assert len(scans) == 1


class _CountedPattern:
    """A compiled pattern that counts its ``fullmatch`` calls."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.calls = 0

    def fullmatch(self, text: str) -> re.Match[str] | None:
        self.calls += 1
        return self.pattern.fullmatch(text)


def test_a_url_asked_again_at_once_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A crawler asks for each of its agents, or decides then explains: the
    # URL's path is read once, not once per question.
    counted = _CountedPattern(urls.CLEAN_URL)
    monkeypatch.setattr(urls, "CLEAN_URL", counted)
    monkeypatch.setattr(robotstxt, "CLEAN_URL", counted, raising=False)
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /a\n")
    for url in ("https://example.com/a/b?q", "https://example.com/b"):
        before = counted.calls
        answers = [robots.allowed(url, agent) for agent in ("bot", "Googlebot", "x")]
        decision = robots.explain(url, "bot")
        assert counted.calls == before + 1
        assert answers == [decision.allowed] * 3
        assert decision.path == url.removeprefix("https://example.com")
    # URLs taking turns are each read every time (one pair is kept), and a
    # URL that needs normalising is kept as its normalised path.
    before = counted.calls
    for url in ("/%61", "https://example.com/b", "/%61"):
        assert not robots.allowed(url, "bot") or url.endswith("b")
        assert not robots.allowed(url, "bot") or url.endswith("b")
    assert counted.calls == before + 3
    assert urls.request_path("/%61") == "/a"


class RankedRules:
    """Counts the rules the precedence strategies rank, one by one or in bulk."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        for mode in PRECEDENCE_MODES:
            kind = type(strategy_for(mode))
            rank, ranks = kind.rank, kind.ranks

            def one(strategy: Any, *args: Any, _rank: Any = rank) -> int:
                self.count += 1
                return int(_rank(strategy, *args))

            def many(strategy: Any, codes: Any, priorities: Any, _ranks: Any = ranks) -> Any:
                self.count += len(codes)
                return _ranks(strategy, codes, priorities)

            monkeypatch.setattr(kind, "rank", one)
            monkeypatch.setattr(kind, "ranks", many)


def test_each_wildcard_rule_is_ranked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rules of one star (with or without text after it, "$", or a prefix),
    # and of several stars: each row ranked once, whatever the buckets.
    rules = "".join(
        f"Disallow: /a{i}*\nAllow: /b*.x{i}$\nDisallow: *c{i}\nDisallow: /d{i}$\n"
        f"Disallow: /*e{i}*f*g\n"
        for i in range(10)
    )
    robots = RobotsTxt.parse("User-agent: *\n" + rules)
    ranked = RankedRules(monkeypatch)
    for mode in PRECEDENCE_MODES:
        ranked.count = 0
        index = robots._index("bot", mode, "token")
        assert index._wild is not None
        assert index._literals is None
        assert ranked.count <= 50, mode
        robots._views.clear()
    assert not robots.allowed("/a3x", "bot")
    assert robots.allowed("/b.x3", "bot")
    assert not robots.allowed("/zc7", "bot")
    assert not robots.allowed("/d1", "bot")
    assert robots.allowed("/d1/", "bot")
    assert not robots.allowed("/e4-f-g", "bot")


def test_rules_of_several_stars_are_not_read_again_for_their_pattern(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GENERAL rules (several pieces between stars) get their pattern from
    # the columns read in bulk, not from their line read again.
    read_again: list[int] = []
    member_line = reading.member_line

    def counted(body: bytes, start: int) -> tuple[str, str] | None:
        read_again.append(start)
        return member_line(body, start)

    monkeypatch.setattr(groups, "member_line", counted)
    robots = RobotsTxt.parse(
        "User-agent: *\nDisallow: /*a1*b*c\nDisallow: /x*%7e*z$\nAllow: *q*r*s\nDisallow: /q\n"
    )
    robots._index("bot", "most-specific", "token")
    assert read_again == []
    assert not robots.allowed("/-a1-b-c", "bot")
    assert robots.allowed("/-a1-c-b", "bot")
    assert not robots.allowed("/x/~/z", "bot")
    assert robots.allowed("/x/~/z/", "bot")
    assert robots.allowed("/q/r/s", "bot")
    assert not robots.allowed("/q/s/r", "bot")


class IndexSearches:
    """Counts the searches of a file's index for a path's deciding rule."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        decide = RuleIndex.decide

        def counted(index: RuleIndex, path: str) -> int:
            self.count += 1
            return decide(index, path)

        monkeypatch.setattr(RuleIndex, "decide", counted)


def test_a_question_asked_again_at_once_is_answered_from_the_last_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # allowed() then explain(), or another agent sharing the same rules: the
    # index decides once. An agent with rules of its own is decided apart.
    robots = RobotsTxt.parse(
        "User-agent: *\nDisallow: /a\nDisallow: /*.php$\n\nUser-agent: otherbot\nAllow: /\n"
    )
    url = "https://example.com/a/b.php"

    def ask() -> list[object]:
        return [
            robots.allowed(url, "examplebot"),
            robots.allowed(url, "Googlebot"),
            robots.explain(url, "examplebot").allowed,
            robots.allowed(url, "otherbot"),
            robots.allowed(url, "examplebot"),
        ]

    assert ask() == [False, False, False, True, False]
    assert robots.allowed("/elsewhere", "examplebot")  # another question last
    searches = IndexSearches(monkeypatch)
    ask()
    # examplebot (Googlebot and explain() share it), otherbot, examplebot again.
    assert searches.count == 3
    assert robots.allowed("https://example.com/b", "Googlebot")
    assert not robots.allowed("https://example.com/a", "Googlebot")
