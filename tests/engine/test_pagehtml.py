"""The head scanner that finds meta tags: tolerant, head only, bounded."""

from __future__ import annotations

import re

import pytest

from scrapy_robotrules.engine.page import html as scanner_module
from scrapy_robotrules.engine.page.html import DEFAULT_LIMIT, MAX_TAGS, head_metas


class Counting:
    """A compiled pattern that counts the characters its searches and matches look at."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.examined = 0

    def search(self, text: str, position: int = 0) -> re.Match[str] | None:
        found = self.pattern.search(text, position)
        self.examined += (found.start() if found else len(text)) - position + 1
        return found

    def match(self, text: str, position: int = 0) -> re.Match[str] | None:
        found = self.pattern.match(text, position)
        self.examined += (found.end() if found else position) - position + 1
        return found


@pytest.fixture
def scanner(monkeypatch: pytest.MonkeyPatch) -> tuple[Counting, Counting]:
    opening, tag = Counting(scanner_module._OPENING), Counting(scanner_module._TAG)
    monkeypatch.setattr(scanner_module, "_OPENING", opening)
    monkeypatch.setattr(scanner_module, "_TAG", tag)
    return opening, tag


def test_meta_tags_of_the_head_in_order() -> None:
    page = b"""<!DOCTYPE html><html><head>
    <META NAME="Robots" CONTENT="noindex, NOFOLLOW">
    <meta name=examplebot content='none' >
    <meta charset="utf-8"><meta name="x" content="a&amp;b&#44; c">
    </head><body></body></html>"""
    assert head_metas(page) == [
        ("Robots", "noindex, NOFOLLOW"),
        ("examplebot", "none"),
        ("x", "a&b, c"),
    ]


def test_attributes_in_any_order_first_one_counts() -> None:
    assert head_metas('<meta content="noindex" name="robots" name="other">') == [
        ("robots", "noindex")
    ]


def test_body_is_not_read() -> None:
    page = '<head></head><meta name="robots" content="a"><body><meta name="robots" content="b">'
    assert head_metas(page) == []
    assert head_metas('<meta name="robots" content="a"><body><meta name=robots content=b>') == [
        ("robots", "a")
    ]


def test_no_head_tags_at_all() -> None:
    assert head_metas('<meta name="robots" content="noindex"><p>text') == [("robots", "noindex")]


@pytest.mark.parametrize(
    "hidden",
    [
        '<!-- <meta name="robots" content="hidden"> -->',
        "<script>var s = \"<meta name='robots' content='hidden'>\";</script>",
        '<style>/* <meta name="robots" content="hidden"> */</style>',
        '<title>About <meta name="robots" content="hidden"></title>',
    ],
)
def test_comments_and_raw_text_are_skipped(hidden: str) -> None:
    page = f'<head>{hidden}<meta name="robots" content="seen"></head>'
    assert head_metas(page) == [("robots", "seen")]


def test_only_the_first_bytes_are_read() -> None:
    page = b"<head>" + b" " * 1000 + b'<meta name="robots" content="noindex"></head>'
    assert head_metas(page, limit=500) == []
    assert head_metas(page, limit=2000) == [("robots", "noindex")]


def test_encoding_used_and_unknown_encoding_falls_back() -> None:
    page = '<meta name="robots" content="café">'.encode("latin-1")
    assert head_metas(page, "latin-1") == [("robots", "café")]
    assert head_metas(b'<meta name="robots" content="noindex">', "no-such-codec") == [
        ("robots", "noindex")
    ]


def test_stray_quote_in_unquoted_value() -> None:
    assert head_metas('<meta name=robots content=noindex"><meta name=a content=b>') == [
        ("robots", 'noindex"'),
        ("a", "b"),
    ]


def test_at_most_max_tags() -> None:
    page = '<meta name="robots" content="noarchive">' * (MAX_TAGS + 5)
    assert len(head_metas(page)) == MAX_TAGS


@pytest.mark.parametrize(
    "hostile",
    [
        '<a "' + "<a " * 100_000,
        '<meta name="' + "<a " * 100_000,
        "<script" * 50_000,
        "<!--" * 50_000,
        "<a =" * 80_000,
        "<" * 300_000,
        "</" * 150_000,
        "<a b=" + "'" * 200_000,
    ],
)
def test_hostile_markup_is_read_in_one_pass(
    hostile: str, scanner: tuple[Counting, Counting]
) -> None:
    # Work, not time: the characters the scanner's patterns look at stay
    # within a few times the text read. A scanner that started again after
    # each tag (quadratic on these inputs) looks at millions times more.
    head_metas(hostile.encode())
    read = min(len(hostile.encode()), DEFAULT_LIMIT)
    assert sum(pattern.examined for pattern in scanner) <= 3 * read + 16


def test_large_page_costs_only_its_head(scanner: tuple[Counting, Counting]) -> None:
    page = b'<head><meta name="robots" content="noindex"><style>' + b"x" * 20_000_000
    assert head_metas(page) == [("robots", "noindex")]
    assert sum(pattern.examined for pattern in scanner) <= 3 * DEFAULT_LIMIT
    late = b"<head>" + b" " * DEFAULT_LIMIT + b'<meta name="robots" content="noindex">'
    assert head_metas(late) == []  # past the limit: not read


def test_repeated_question_answers_alike_and_apart() -> None:
    # A caller changing its list changes nothing for the next, and another
    # limit or encoding is another question.
    page = '<head><meta name="robots" content="noindex">é<meta name=a content=b>'.encode()
    first = head_metas(page, "utf-8")
    first.append(("x", "y"))
    assert head_metas(page, "utf-8") == [("robots", "noindex"), ("a", "b")]
    assert head_metas(page, "utf-8", 30) == []
    assert head_metas(page, "latin-1")[1] == ("a", "b")
    assert head_metas(page, "utf-8") == [("robots", "noindex"), ("a", "b")]
