"""Any input, however broken, gives a result and never raises."""

from __future__ import annotations

import pytest

from scrapy_robotrules import RobotsTxt

BROKEN: dict[str, bytes] = {
    "binary": bytes(range(256)) * 64,
    "nul bytes": b"User-agent: *\x00\nDisallow: /a\x00b\n\x00\x00\x00",
    "utf-16 with bom": "User-agent: *\nDisallow: /\n".encode("utf-16"),
    "invalid utf-8": b"User-agent: *\nDisallow: /\xff\xfe\xc3(\n",
    "html page": b"<!DOCTYPE html><html><head><title>404</title></head>"
    b"<body>Not found</body></html>",
    "2 MB file": b"User-agent: *\n" + b"Disallow: /private/path/number/x\n" * 62_500,
    "1 MB line": b"User-agent: *\nDisallow: /" + b"a" * 1_000_000 + b"\nDisallow: /b\n",
    "millions of stars": b"User-agent: *\nDisallow: /" + b"*" * 2_000_000 + b"x\n",
    "only line breaks": b"\r\n\r\r\n\n" * 10_000,
    "colons and hashes": b":::#:#::\n#:\n:\nUser-agent::\nDisallow:::\n",
    "lone surrogates": "User-agent: *\nDisallow: /\ud800x\n".encode("utf-8", "surrogatepass"),
    # Clean lines and one byte that needs normalising at the very end: a
    # regex with nested repeats once backtracked without end on this.
    "clean then one dirty byte": b"User-agent: *\n" + b"Disallow: /a/b/c\n" * 30_000 + b"\x01",
    "comments then one dirty byte": b"User-agent: *\n" + b"Disallow: /a # c\n" * 30_000 + b"\x01",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_input_gives_a_result(name: str) -> None:
    robots = RobotsTxt.parse(BROKEN[name], "http://e.com/robots.txt")
    for url in ("http://e.com/", "http://e.com/a\x00b", "/b", "http://e.com/" + "a" * 100_000):
        for mode in ("most-specific", "first-match", "allow-first"):
            decision = robots.explain(url, "bot/1.0", mode)
            assert decision.allowed == robots.allowed(url, "bot/1.0", mode)
    robots.crawl_delay("bot")
    robots.request_rate("bot")
    robots.visit_time("bot")
    assert isinstance(robots.sitemaps, list)


def test_a_utf16_file_is_read_as_utf8_and_so_allows_everything() -> None:
    # SPEC 1 and RFC 9309 say UTF-8; the NULs of UTF-16 make every key unknown.
    robots = RobotsTxt.parse(BROKEN["utf-16 with bom"])
    assert robots.allowed("/x", "bot")
    assert robots.unknown_lines > 0


def test_the_2mb_file_is_cut_at_the_limit() -> None:
    robots = RobotsTxt.parse(BROKEN["2 MB file"])
    assert robots.truncated
    assert not robots.allowed("/private/path/number/x", "bot")


def test_a_1mb_line_is_beyond_the_limit_and_dropped() -> None:
    robots = RobotsTxt.parse(BROKEN["1 MB line"])
    assert robots.truncated
    assert robots.allowed("/" + "a" * 10, "bot")


def test_str_input_with_lone_surrogates() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\ud800\n")
    assert not robots.allowed("/%ED%A0%80", "bot")
    assert robots.allowed("/x", "bot")


@pytest.mark.parametrize(
    "url",
    [
        "",
        "not a url",
        "http://",
        "http://[::1",
        "mailto:x@y",
        "javascript:alert(1)",
        "\x00",
        "%",
        "//",
    ],
)
def test_odd_urls_get_a_decision(url: str) -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\n")
    assert isinstance(robots.allowed(url, "bot"), bool)


@pytest.mark.parametrize("agent", ["", " ", "/", "*", "\x00", "a" * 10_000, "Bot\u00a0Name/1.0"])
def test_odd_agents_get_a_decision(agent: str) -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /x\n")
    assert not robots.allowed("/x", agent)
