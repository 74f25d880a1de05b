"""Checks of ordinary files do work in proportion to what they need.

The work is counted in the engine's own units (:class:`.CheckWork`), never
timed: buckets of wildcard rules walked and rules tried by a check, rules
read again from the file. A check that walked every bucket, tried rules
its path cannot match or decided a question it had just answered shows as
a count. The decisions themselves are the differential and conformance
tests' to check.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robotrules import Precedence, RobotsTxt
from scrapy_robotrules.engine.robots import reading
from scrapy_robotrules.engine.robots.precedence import MOST_SPECIFIC, PRECEDENCE_MODES
from tests.helpers.differential import SCALE, robots_documents, urls

pytestmark = pytest.mark.performance


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


def wildcard_heads(text: str) -> list[str]:
    """The text before the ``*`` of each wildcard rule of ``text`` ("/" and "" alike)."""
    values = [line.split(": ", 1)[1] for line in text.splitlines() if ": " in line]
    heads = [value.split("*", 1)[0] for value in values if "*" in value]
    return ["" if head == "/" else head for head in heads]


def test_a_check_walks_only_the_buckets_its_path_starts_with() -> None:
    # Wildcard rules are bucketed by their text before the "*": four buckets
    # apply to "/a/b/cd.html" ("", "/a/", "/a/b/", "/a/b/c"), none of the
    # forty "/z<i>/". A check bisects the buckets' keys, walks the buckets
    # its path starts with (and one it passes over on the way there), and
    # tries their rules only (those that could rank above the best rule
    # found so far).
    others = "".join(f"Disallow: /z{i}/*x\n" for i in range(40))
    heads = wildcard_heads(WILD + others)
    bisection = math.ceil(math.log2(len(set(heads)) + 1))
    for mode in PRECEDENCE_MODES:
        robots = RobotsTxt.parse(WILD + others)
        work = robots.count_work()
        tried = 0
        for path in ("/a/b/cd.html", "/a/b/cx", "/a/b/c.php?session", "/z"):
            on_path = [head for head in heads if path.startswith(head)]
            work.clear()
            robots.allowed(path, "bot", mode)
            assert work.buckets_walked <= len(set(on_path)) + 1 + bisection, (mode, path, work)
            assert work.rules_tried <= len(on_path), (mode, path, work)
            tried += work.rules_tried
        assert tried > 0, mode


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
    # A rule's text after the "*" is found after its text before it: "/foo"
    # holds "/foo" only where the prefix "/" stands.
    rules = "".join(f"Disallow: /*word{i}\nDisallow: /a/*.ext{i}$\n" for i in range(20))
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /*/foo\n" + rules)
    assert robots.allowed("/a/b/c.html?q=1", "bot")
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
def test_unknown_lines_are_counted_as_line_by_line(lines: list[str], cut: tuple[int, int]) -> None:
    buf = "".join("\n" + line for line in lines).encode() + b"\n"
    start, end = sorted(cut)
    expected = 0
    for at in (i for i in range(start, min(end, len(buf))) if buf[i : i + 1] == b"\n"):
        following = buf.find(b"\n", at + 1)
        line = buf[at + 1 : min(end, len(buf) if following < 0 else following)]
        content = line.lstrip(b" \t\v\f")[:1] not in (b"", b"#")
        expected += content and KNOWN_LINE.match(b"\n" + line) is None
    assert reading.count_unknown(buf, start, end) == expected


def test_wildcard_rules_of_every_shape_are_checked_without_reading_a_rule_again() -> None:
    # Rules of one star (with or without text after it, "$", or a prefix)
    # and of several stars are held as read: no check reads one again from
    # the file to match it.
    rules = "".join(
        f"Disallow: /a{i}*\nAllow: /b*.x{i}$\nDisallow: *c{i}\nDisallow: /d{i}$\n"
        f"Disallow: /*e{i}*f*g\n"
        for i in range(10)
    )
    several = "Disallow: /*a1*b*c\nDisallow: /x*%7e*z$\nAllow: *q*r*s\nDisallow: /q\n"
    for body in (rules, several):
        robots = RobotsTxt.parse("User-agent: *\n" + body)
        work = robots.count_work()
        for mode in PRECEDENCE_MODES:
            assert robots.allowed("/index.html", "bot", mode)
        if body is rules:
            assert not robots.allowed("/a3x", "bot")
            assert robots.allowed("/b.x3", "bot")
            assert not robots.allowed("/zc7", "bot")
            assert not robots.allowed("/d1", "bot")
            assert robots.allowed("/d1/", "bot")
            assert not robots.allowed("/e4-f-g", "bot")
        else:
            assert not robots.allowed("/-a1-b-c", "bot")
            assert robots.allowed("/-a1-c-b", "bot")
            assert not robots.allowed("/x/~/z", "bot")
            assert robots.allowed("/x/~/z/", "bot")
            assert robots.allowed("/q/r/s", "bot")
            assert not robots.allowed("/q/s/r", "bot")
        assert work.rules_read_again == 0, work


def test_a_question_asked_again_at_once_is_answered_from_the_last_answer() -> None:
    # allowed() then explain(), or another agent sharing the same rules: the
    # rules are tried once. An agent with rules of its own is decided apart.
    robots = RobotsTxt.parse(
        "User-agent: *\nDisallow: /a\nDisallow: /*.php$\n\nUser-agent: otherbot\nAllow: /*.php$\n"
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
    work = robots.count_work()
    # Each rule set holds one wildcard rule, which the path matches.
    assert robots.allowed("/b.php", "otherbot")
    assert work.rules_tried == 1
    work.clear()
    assert ask() == [False, False, False, True, False]
    # examplebot (Googlebot and explain() share it), otherbot, examplebot again.
    assert work.rules_tried == 3
    assert robots.allowed("https://example.com/b", "Googlebot")
    assert not robots.allowed("https://example.com/a", "Googlebot")


def test_a_file_counts_alike_whenever_it_starts_counting() -> None:
    # Before its first check or after (its rules indexed already).
    early, late = RobotsTxt.parse(WILD), RobotsTxt.parse(WILD)
    early_work = early.count_work()
    for robots in (early, late):
        assert robots.allowed("/index.html", "bot")
    late_work = late.count_work()
    assert late.count_work() is late_work
    for work in (early_work, late_work):
        work.clear()
    for robots in (early, late):
        for path in ("/a/b/cd.html", "/a/b/cx", "/z", "/q/x"):
            robots.allowed(path, "bot")
        robots.explain("/a/b/cx", "bot")
    assert repr(early_work) == repr(late_work)
    assert late_work.rules_tried > 0


@settings(max_examples=100 * SCALE, deadline=None)
@given(
    content=robots_documents(),
    asked=st.lists(urls(), min_size=1, max_size=6),
    mode=st.sampled_from(PRECEDENCE_MODES),
)
def test_a_file_that_counts_decides_as_one_that_does_not(
    content: str | bytes, asked: list[str], mode: Precedence
) -> None:
    counted, plain = RobotsTxt.parse(content), RobotsTxt.parse(content)
    counted.allowed("/", "FooBot", mode)
    counted.count_work()
    for url in asked:
        decision = counted.explain(url, "FooBot", mode)
        expected = plain.explain(url, "FooBot", mode)
        assert (decision.allowed, decision.rule) == (expected.allowed, expected.rule)
        assert counted.allowed(url, "FooBot", mode) is expected.allowed
