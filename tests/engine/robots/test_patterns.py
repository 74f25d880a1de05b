"""SPEC 4: patterns, wildcards, the end anchor, percent-normalisation, what of a URL is matched."""

from __future__ import annotations

import pytest

from scrapy_robotrules import Precedence, RobotsTxt
from scrapy_robotrules.engine.robots.urls import normalize, origin_of, request_path


def disallowed(pattern: str, url: str, robots_url: str | None = None) -> bool:
    robots = RobotsTxt.parse(f"User-agent: *\nDisallow: {pattern}\n", robots_url)
    return not robots.allowed(url, "bot")


@pytest.mark.parametrize(
    ("pattern", "url", "expected"),
    [
        ("/tmp", "/tmp", True),
        ("/tmp", "/tmp/a.html", True),
        ("/tmp", "/tmpfile.html", True),
        ("/tmp/", "/tmp", False),
        ("/Tmp", "/tmp", False),  # case-sensitive
        ("/*.gif$", "/a/b.gif", True),
        ("/*.gif$", "/a/b.gif?x", False),
        ("/*.gif", "/a/b.gif?x", True),
        ("/a$", "/a", True),
        ("/a$", "/ab", False),
        ("/a$b", "/a$b", True),  # $ not at the end is a literal
        ("/a$b", "/ab", False),
        ("*", "/anything", True),
        ("/a*b*c", "/a-b-c", True),
        ("/a*b*c", "/a-c-b", False),
        ("/a**b", "/axxb", True),
        ("/a*$", "/a/anything", True),
        ("/*/x$", "/a/b/x", True),
        ("/*/x$", "/a/b/x/y", False),
    ],
)
def test_wildcards_and_anchor(pattern: str, url: str, expected: bool) -> None:
    assert disallowed(pattern, url) == expected


@pytest.mark.parametrize(
    ("pattern", "url", "expected"),
    [
        ("/%7Efred/hi.html", "/~fred/hi.html", True),
        ("/~fred/hi.html", "/%7efred/hi.html", True),
        ("/a%3cd.html", "/a%3Cd.html", True),
        ("/~fred%2Fhi.html", "/~fred/hi.html", False),
        ("/a/b.html", "/a%2fb.html", False),
        ("/file-%2A.html", "/file-*.html", True),
        ("/file-%2A.html", "/file-x.html", False),
        ("/%24", "/$100", True),
        ("/100%", "/100%25", True),  # a stray % is %25
        ("/a b", "/a%20b", True),
        ("/ツ", "/%E3%83%84", True),
    ],
)
def test_both_sides_are_normalised_alike(pattern: str, url: str, expected: bool) -> None:
    assert disallowed(pattern, url) == expected


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("/%7e", "/~"),
        ("/%2f", "/%2F"),
        ("/%c3%a9", "/%C3%A9"),
        ("/é", "/%C3%A9"),
        ("/%", "/%25"),
        ("/%zz", "/%25zz"),
        ('/a"<>\\^`{|}', "/a%22%3C%3E%5C%5E%60%7B%7C%7D"),
        ("/*$", "/%2A%24"),
        ("/:@!&'()+,;=?[]", "/:@!&'()+,;=?[]"),
        ("/\x00\x1f\x7f", "/%00%1F%7F"),
        ("/\udce9", "/%E9"),  # a raw byte kept by surrogateescape
    ],
)
def test_normalize(raw: str, normal: str) -> None:
    assert normalize(raw) == normal
    assert normalize(normal) == normal


def test_empty_value_is_no_rule() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow:\nAllow:\n")
    decision = robots.explain("/x", "bot")
    assert decision.allowed
    assert decision.rule is None


def test_value_not_starting_with_slash_or_star_never_matches() -> None:
    assert not disallowed("foo", "/foo")
    assert not disallowed("foo", "/")


@pytest.mark.parametrize(
    ("pattern", "url", "expected"),
    [
        ("http://e.com/private", "http://e.com/private/x", True),
        ("http://E.COM:80/private", "http://e.com/private", True),
        ("http://e.com", "http://e.com/anything", True),  # no path -> "/"
        ("http://e.com/p?q=1", "http://e.com/p?q=1", True),
        ("https://e.com/private", "http://e.com/private", False),  # other scheme
        ("http://e.com:8080/private", "http://e.com/private", False),  # other port
        ("http://other.com/private", "http://e.com/private", False),  # other host
        ("mailto:me@e.com", "http://e.com/mailto:me@e.com", False),
    ],
)
def test_absolute_url_values(pattern: str, url: str, expected: bool) -> None:
    assert disallowed(pattern, url, "http://e.com/robots.txt") == expected


def test_absolute_url_values_are_ignored_when_the_robots_url_is_unknown() -> None:
    assert not disallowed("http://e.com/private", "http://e.com/private")


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("http://e.com", "/"),
        ("http://e.com?q", "/?q"),
        ("http://e.com/a;p?q#frag", "/a;p?q"),
        ("https://u:p@e.com:8443/a", "/a"),
        ("http://e.com/a\\b c", "/a%5Cb%20c"),  # not taken for a clean URL
        ("//e.com/a", "/a"),
        ("/a#f", "/a"),
        ("", "/"),
    ],
)
def test_what_of_a_url_is_matched(url: str, path: str) -> None:
    assert request_path(url) == path


@pytest.mark.parametrize(
    "url",
    ["http://e.com/robots.txt", "http://e.com/robots.txt?x=1", "/robots.txt"],
)
def test_robots_txt_itself_is_always_allowed(url: str) -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\n")
    assert robots.allowed(url, "bot")
    assert "always allowed" in robots.explain(url, "bot").reason


def test_only_the_exact_robots_txt_path_is_exempt() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\n")
    assert not robots.allowed("/robots.txt.bak", "bot")
    assert not robots.allowed("/robots.txt;x", "bot")


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("http://E.com:80/x", "http://e.com"),
        ("https://e.com:443/", "https://e.com"),
        ("https://e.com:8443/", "https://e.com:8443"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
        ("http://bücher.de/", "http://xn--bcher-kva.de"),
    ],
)
def test_origin(url: str, origin: str) -> None:
    assert origin_of(url) == origin


@pytest.mark.parametrize("url", ["", "/just/a/path", "http://e.com:99999/", "http://[::1/"])
def test_no_origin_is_a_clear_error(url: str) -> None:
    with pytest.raises(ValueError, match="cannot tell the origin"):
        origin_of(url)


def test_pathological_pattern_through_the_public_api() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*a*a*b\n")
    assert robots.allowed("/" + "a" * 100_000, "bot")
    assert not robots.allowed("/" + "a" * 100_000 + "b", "bot")


LONG_CASES = [
    "User-agent: *\nDisallow: /*x*y\nAllow: /*q$\nDisallow: /*.php$\n",
    "User-agent: *\nAllow: /a*b\nDisallow: /*b*a\nDisallow: /a/*z\nAllow: /a/\n",
    "User-agent: *\n" + "".join(f"Disallow: /*k{i}*m{i % 7}\n" for i in range(300)),
]
LONG_PATHS = [
    "/" + "x" * 3000 + "y",
    "/" + "x" * 3000,
    "/" + "ab" * 2000 + "q",
    "/a/" + "b" * 5000 + "z",
    "/" + "é" * 2500 + ".php",
    "/" + "%41" * 1500 + "k12m5",
    "/" + "k299" + "x" * 4000 + "m5",
]


@pytest.mark.parametrize("content", LONG_CASES)
@pytest.mark.parametrize("mode", ["most-specific", "first-match", "allow-first"])
def test_long_paths_decide_as_the_reference_does(content: str, mode: Precedence) -> None:
    """Paths past the long-path threshold take another branch; same answers."""
    from tests.helpers.reference import reference_allowed

    robots = RobotsTxt.parse(content)
    for path in LONG_PATHS:
        expected = reference_allowed(content, path, "bot", mode, "token")
        assert robots.allowed(path, "bot", mode) == expected, path[:40]
