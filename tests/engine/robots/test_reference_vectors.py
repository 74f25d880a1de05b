"""Validate the test oracle (tests/helpers/reference.py) against every conformance vector."""

from __future__ import annotations

import pytest

from tests.helpers.reference import (
    normalise,
    reference_allowed,
    reference_crawl_delay,
    reference_deciding_rule,
    reference_rule_matches,
)
from tests.helpers.vectors import Vector, decode_escapes, load_vectors, vector_lines, vectors_path

# The repository's copy: a missing file fails at collection, never skips.
VECTORS: list[Vector] = load_vectors()


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_reference_matches_vector(vector: Vector) -> None:
    allowed = reference_allowed(
        vector.robots_txt,
        vector.url,
        vector.agent,
        vector.precedence,
        vector.agent_match,
        robots_url=vector.robots_url,
    )
    rule = reference_deciding_rule(
        vector.robots_txt,
        vector.url,
        vector.agent,
        vector.precedence,
        vector.agent_match,
        robots_url=vector.robots_url,
    )
    assert allowed == vector.expected, f"{vector.source}; deciding rule {rule}"
    assert allowed == (rule is None or rule[0] == "allow")


def test_every_vector_line_is_loaded() -> None:
    assert vectors_path().is_file()
    assert len(VECTORS) == len(vector_lines())
    assert len(VECTORS) > 100
    assert {v.precedence for v in VECTORS} == {"most-specific", "first-match", "allow-first"}
    assert {v.agent_match for v in VECTORS} == {"token", "substring"}


def test_decode_escapes() -> None:
    assert decode_escapes(r"a\nb\r\n\tc\\d") == "a\nb\r\n\tc\\d"
    assert decode_escapes("ツ") == "ツ"
    assert decode_escapes(r"Disallow: /caf\xe9/ ツ") == b"Disallow: /caf\xe9/ \xe3\x83\x84"
    with pytest.raises(ValueError, match="bad escape"):
        decode_escapes(r"\q")
    with pytest.raises(ValueError, match="bad escape"):
        decode_escapes("\\x4")


# The oracle on the examples SPEC.md itself gives (sections 1-6).


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("%7e", "~"),
        ("%7E", "~"),
        ("%2f", "%2F"),
        ("%c3%a9", "%C3%A9"),
        ("é", "%C3%A9"),
        ("%", "%25"),
        ("%4", "%254"),
        ("%zz", "%25zz"),
        ("*$", "%2A%24"),
        (' "<>\\^`{|}', "%20%22%3C%3E%5C%5E%60%7B%7C%7D"),
        (":/?#[]@!&'()+,;=", ":/?#[]@!&'()+,;="),
        ("AZaz09-._~", "AZaz09-._~"),
        ("\udce9", "%E9"),  # a raw byte kept by surrogateescape
    ],
)
def test_reference_normalise(text: str, normalised: str) -> None:
    assert normalise(text) == normalised


@pytest.mark.parametrize(
    ("pattern", "url", "matches"),
    [
        ("/tmp", "/tmp", True),
        ("/tmp", "/tmp/a.html", True),
        ("/tmp", "/tmpfile.html", True),
        ("/tmp/", "/tmp", False),
        ("/%7Efred/hi.html", "/~fred/hi.html", True),
        ("/%7efred", "/%7Efred", True),
        ("/~fred%2Fhi.html", "/~fred/hi.html", False),
        ("/file-%2A.html", "/file-*.html", True),
        ("/a$b", "/a$b", True),
        ("/a$", "/a", True),
        ("/a$", "/a?", False),
        ("/*.php$", "/x.php", True),
        ("/*.php$", "/x.php?y", False),
        ("/a", "http://h/a;p?q#f", True),
        ("/a;p?q", "http://h/a;p?q#f", True),
        ("", "/a", False),
        ("a", "/a", False),
        ("*a", "/xa", True),
        ("/", "http://h", True),
    ],
)
def test_reference_pattern_examples(pattern: str, url: str, matches: bool) -> None:
    assert reference_rule_matches(pattern, url) is matches


def test_reference_reading_examples() -> None:
    rules = "User-agent: *\r\nAllow: /a\rDisallow: /\n\nAllow: /b\r\n"
    assert reference_deciding_rule(rules, "/b", "x", "first-match", "token") == ("disallow", "/", 3)
    assert reference_deciding_rule(rules, "/a", "x", "first-match", "token") == ("allow", "/a", 2)
    raw = b"\xef\xbb\xbfUser-agent: *\nDisallow: /caf\xe9/\n"
    assert not reference_allowed(raw, "/caf%E9/", "x", "most-specific", "token")
    assert reference_allowed(raw, "/café/", "x", "most-specific", "token")
    absolute = "User-agent: *\nDisallow: http://h/p\n"
    assert reference_allowed(absolute, "/p", "x", "first-match", "token")
    assert not reference_allowed(absolute, "/p", "x", "first-match", "token", "http://h/robots.txt")
    assert reference_allowed(absolute, "/p", "x", "first-match", "token", "https://h/robots.txt")


def test_reference_agent_examples() -> None:
    rules = "User-agent: bot\nDisallow: /\nUser-agent: googlebot*\nCrawl-delay: 2\n"
    for agent in ["Bot", "Robot/1.0", "Spambot (+http://x)"]:
        assert not reference_allowed(rules, "/", agent, "first-match", "substring")
    assert reference_allowed(rules, "/", "Robot", "first-match", "token")
    assert reference_crawl_delay(rules, "Googlebot/2.1", "token") == 2.0
    merged = (
        "User-agent: a\nCrawl-delay: 1\nDisallow: /x\n"
        "User-agent: b\nUser-agent: a\nCrawl-delay: 3\n"
    )
    assert reference_crawl_delay(merged, "a", "token") == 3.0
    assert reference_crawl_delay(merged, "a", "substring") == 1.0
    assert reference_crawl_delay(merged, "c", "token") is None
    # SPEC 2: a Crawl-delay does not end the run of User-agent lines.
    joined = "User-agent: a\nCrawl-delay: 1\nUser-agent: b\nDisallow: /x\n"
    assert reference_crawl_delay(joined, "b", "token") == 1.0
    assert not reference_allowed(joined, "/x", "a", "first-match", "token")
    # SPEC 3: an empty value applies to every crawler in substring style only.
    empty = "User-agent:\nDisallow: /\n"
    assert not reference_allowed(empty, "/", "bot", "first-match", "substring")
    assert reference_allowed(empty, "/", "bot", "first-match", "token")
