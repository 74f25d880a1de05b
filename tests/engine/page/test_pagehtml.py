"""The meta tags of the head and the nofollow links, as lxml's HTML parser reads them.

Its memory and what it parses on hostile markup: ``tests/performance/test_pagehtml_cost.py``.
"""

from __future__ import annotations

import threading

import pytest

from scrapy_robotrules.engine.page.html import (
    MAX_TAGS,
    decode_html,
    head_metas,
    nofollow_links,
    text_encoding,
)


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
        '<template><meta name="robots" content="hidden"></template>',
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


def test_repeated_question_answers_alike_and_apart() -> None:
    # A caller changing its list changes nothing for the next, and another
    # limit or encoding is another question.
    page = (
        "<head><meta name=robots content=noindex><title>é</title><meta name=a content=b>".encode()
    )
    first = head_metas(page, "utf-8")
    first.append(("x", "y"))
    assert head_metas(page, "utf-8") == [("robots", "noindex"), ("a", "b")]
    assert head_metas(page, "utf-8", 30) == []
    assert head_metas(page, "latin-1")[1] == ("a", "b")
    assert head_metas(page, "utf-8") == [("robots", "noindex"), ("a", "b")]


@pytest.mark.parametrize("first", ["text", "&nbsp;", "<div>", "<p>", "<img src=x>", "<iframe>"])
def test_the_head_ends_where_an_html_parser_ends_it(first: str) -> None:
    # Text, or an element that has no place in a head, ends the head as a
    # browser's head ends there; elements a head holds do not.
    page = f'<head><meta name="a" content="1">{first}<meta name="robots" content="noindex">'
    assert head_metas(page) == [("a", "1")]
    kept = '<head><link rel="icon" href="/i"><base href="/"><noscript><img src="x"></noscript>'
    assert head_metas(f'{kept}<meta name="robots" content="noindex">') == [("robots", "noindex")]


def test_an_unfinished_tag_is_not_read() -> None:
    # Cut by the limit or by the end of the page, as a browser drops it.
    page = '<head><meta name="a" content="1"><meta name="robots" content="noindex">'
    assert head_metas(page, limit=len(page) - 1) == [("a", "1")]
    assert head_metas('<meta name="robots" content="noindex"') == []
    assert nofollow_links('<a rel="nofollow" href="/x"') == []


def test_a_reading_stopped_early_leaves_nothing_for_the_next() -> None:
    # Readings stop where their answer is complete (the end of the head,
    # the last tag asked for); the next reading starts from a new page.
    many = '<meta name="robots" content="noarchive">' * 3 + "<body><p>"
    assert head_metas(many, max_tags=1) == [("robots", "noarchive")]
    assert head_metas("<title>t") == []
    assert nofollow_links(many + '<a rel="nofollow" href="/x"><div>') == ["/x"]
    assert head_metas('<meta name="a" content="b">') == [("a", "b")]


def test_readings_in_threads_of_their_own() -> None:
    pages = [f'<head><meta name="robots" content="n{i}"><title>t</title></head>' for i in range(8)]
    answers: dict[int, list[list[tuple[str, str]]]] = {}

    def read(i: int) -> None:
        answers[i] = [head_metas(pages[i] * 50, max_tags=None) for _ in range(50)]

    threads = [threading.Thread(target=read, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(answer == [[("robots", f"n{i}")]] * 50 for i, answer in answers.items())
    assert len(answers) == 8


def test_text_that_no_encoding_writes_is_read_without_an_exception() -> None:
    assert head_metas('<meta name="a" content="\ud800b">') == [("a", "?b")]


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
