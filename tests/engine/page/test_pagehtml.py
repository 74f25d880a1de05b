"""The head scanner that finds meta tags: tolerant, head only, bounded."""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Callable

import pytest

from scrapy_robotrules.engine.page import html as scanner_module
from scrapy_robotrules.engine.page.html import (
    DEFAULT_LIMIT,
    MAX_TAGS,
    decode_html,
    head_metas,
    nofollow_links,
    text_encoding,
)


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
def scanner(monkeypatch: pytest.MonkeyPatch) -> list[Counting]:
    counted = []
    for name in ("_OPENING", "_TAG_NAME", "_TAG_STOP", "_ATTRIBUTE"):
        pattern = Counting(getattr(scanner_module, name))
        monkeypatch.setattr(scanner_module, name, pattern)
        counted.append(pattern)
    return counted


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
def test_hostile_markup_is_read_in_one_pass(hostile: str, scanner: list[Counting]) -> None:
    # Work, not time: the characters the scanner's patterns look at stay
    # within a few times the text read. A scanner that started again after
    # each tag (quadratic on these inputs) looks at millions times more.
    head_metas(hostile.encode())
    read = min(len(hostile.encode()), DEFAULT_LIMIT)
    assert sum(pattern.examined for pattern in scanner) <= 3 * read + 16


def test_large_page_costs_only_its_head(scanner: list[Counting]) -> None:
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


# Attribute floods: what is passed is not kept.

ATTRIBUTE_FLOODS = {
    "one name repeated": lambda n: "<meta " + "a=b " * (n // 4),
    "names all different": lambda n: "<meta " + "".join(f"a{i}=b " for i in range(n // 10)),
    "wanted ones last": lambda n: "<meta " + "a " * (n // 2) + 'name="robots" content="noindex">',
    "wanted one repeated": lambda n: "<meta " + "name=a " * (n // 7),
    "quoted values": lambda n: "<meta " + 'a="b" ' * (n // 6),
    "tags of attributes": lambda n: "<meta a=b a=b a=b>" * (n // 18),
    "links": lambda n: '<a rel=nofollow href="/x" class=c>' * (n // 34),
}


def peak_of(read: Callable[[], object]) -> int:
    """The most memory allocated at once while ``read`` runs."""
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("flood", ATTRIBUTE_FLOODS.values(), ids=ATTRIBUTE_FLOODS.keys())
def test_attribute_floods_cost_what_a_page_costs(
    flood: Callable[[int], str], scanner: list[Counting]
) -> None:
    # Memory, not time: a scanner that keeps anything per attribute passed
    # (a regular expression's backtracking state over a repeated group,
    # a dict of attributes) holds tens of bytes for each byte read.
    size = 1_000_000
    page = flood(size).encode()
    benign = b"<head><title>t</title></head><body>" + b"<p>Some text, a little.</p>" * size

    def read(page: bytes) -> object:
        return head_metas(page, limit=size), nofollow_links(page, limit=size)

    hostile_peak = peak_of(lambda: read(page))
    assert hostile_peak <= 4 * size
    assert hostile_peak <= 3 * peak_of(lambda: read(benign))  # links found are kept
    # Work: every character is looked at a few times, whatever the attributes.
    for pattern in scanner:
        pattern.examined = 0
    head_metas(page, limit=size)
    nofollow_links(page, limit=size)
    assert sum(pattern.examined for pattern in scanner) <= 6 * len(page) + 16


def test_wanted_attributes_after_a_flood_are_read() -> None:
    page = "<meta " + "a=b " * 10_000 + "CONTENT='noindex' " + "x " * 10 + 'name="robots">'
    assert head_metas(page, limit=len(page)) == [("robots", "noindex")]
    assert head_metas('<meta names="x" xname="y" name=robots content=none>') == [("robots", "none")]


# Encodings: only those pages are written in.


@pytest.mark.parametrize(
    "label", ["hex", "rot13", "zlib", "base64", "quopri", "idna", "undefined", "punycode", "bz2"]
)
def test_a_codec_that_is_no_text_encoding_falls_back_to_utf8(label: str) -> None:
    assert text_encoding(label) is None
    page = '<meta name="robots" content="noindex, café">'.encode()
    assert head_metas(page, label) == [("robots", "noindex, café")]
    assert decode_html(page, label) == page.decode()
    links = b'<body><a href="/x" rel="nofollow">x</a>'
    assert nofollow_links(links, label) == ["/x"]


def test_text_encodings_are_kept() -> None:
    assert text_encoding("latin-1") == "iso8859-1"
    assert text_encoding("cp1252") == "cp1252"
    assert text_encoding("shift_jis") == "shift_jis"
    assert text_encoding("utf-16") == "utf-16"
    assert text_encoding("no-such-codec") is None


# Links with rel="nofollow".


def test_nofollow_links_of_the_whole_page() -> None:
    page = b"""<head><meta name=robots content=all></head><body>
    <a href="/followed">a</a> <a rel="nofollow" href=" /one ">b</a>
    <!-- <a href="/commented" rel="nofollow"> -->
    <script>"<a href='/scripted' rel='nofollow'>"</script>
    <AREA HREF="/two?a=1&amp;b=2" REL="external NOFOLLOW">
    <a rel="nofollowed" href="/three"><a href="/four" rel="noopener nofollow" rel="x">
    </body>"""
    assert nofollow_links(page) == [" /one ", "/two?a=1&b=2", "/four"]


def test_nofollow_links_only_within_the_limit() -> None:
    page = b"<body>" + b" " * 1000 + b'<a href="/late" rel="nofollow">'
    assert nofollow_links(page, limit=500) == []
    assert nofollow_links(page, limit=2000) == ["/late"]
