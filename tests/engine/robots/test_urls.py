"""Percent-normalisation of long input: the same result as its plain references.

Paths of 512 octets and more take ``urls._normalize_long``: each octet is
handled by ``bytes.translate`` tables and big-integer bit operations. These
tests compare it, and its parts, with their plain references
(``tests/helpers/plain_references.py``: ``normalize_long``, run by run as
short input goes; ``many_escapes``, escape by escape; ``literal``, run by
run).
What the fast forms save is ``benchmarks/fast_paths.py``'s to count (its
"long paths" input).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots.urls import (
    _literal,
    _many_escapes,
    _normalize_long,
    _origin_by_urlsplit,
    _to_octets,
    normalize,
    normalize_octets,
    origin_of,
)
from tests.helpers import plain_references

PIECES = [
    "a",
    "/",
    "%",
    "%4",
    "%41",
    "%2f",
    "%2F",
    "%7e",
    "%7E",
    "é",
    "\x00",
    " ",
    "*",
    "$",
    "~",
    "%%",
    "%g1",
    "\udcff",
    "😀",
    "?",
    ":",
    "#",
    "%E9",
    "%25",
    "F",
    "f",
    "%c3%a9",
]


def by_runs(text: str) -> str:
    return plain_references.normalize_long(_to_octets(text))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=400), st.integers(0, 3))
@example(["a"] * 511 + ["%"], 0)  # a stray "%" last, at the threshold
@example(["a"] * 510 + ["%4"], 0)  # half an escape last
@example(["%41"] * 32 + ["a"] * 500, 0)  # as many escapes as are decoded one by one
@example(["%41"] * 33 + ["a"] * 500, 0)  # one more: decoded all at once
@example(["é"] * 256, 0)  # 512 octets, every one encoded
def test_long_input_normalises_as_short_input_does(pieces: list[str], repeat: int) -> None:
    text = "".join(pieces) * (1 + repeat * 20)
    assert _normalize_long(_to_octets(text)) == by_runs(text)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=3000))
def test_long_input_of_any_text(text: str) -> None:
    assert _normalize_long(_to_octets(text)) == by_runs(text)


# Paths of 100,000 characters alternating what normalisation keeps and what it changes.
ADVERSARIAL = {
    "stray % and spaces": "/" + "% " * 50_000,
    "kept and encoded alternating": "/" + "a " * 50_000,
    "escapes and kept alternating": "/" + "a%2F" * 25_000,
    "two kinds of escapes alternating": "/" + "%41%2F" * 16_666,
    "non-ASCII and ASCII alternating": "/" + "aé" * 33_333,
    "few escapes among encoded runs": "/" + "a " * 50_000 + "%41" * 10,
}


@pytest.mark.parametrize("path", ADVERSARIAL.values(), ids=list(ADVERSARIAL))
def test_long_adversarial_paths_normalise_as_run_by_run(path: str) -> None:
    assert normalize(path) == by_runs(path)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=400), st.integers(0, 3))
@example([], 0)
@example(["%"], 0)
@example(["%2"], 0)
@example(["%", "%41"], 0)
@example(["%%41%4"], 2)
@example(["\udcff%7e"], 3)
def test_escapes_decoded_at_once_as_escape_by_escape(pieces: list[str], repeat: int) -> None:
    octets = _to_octets("".join(pieces) * (1 + repeat * 20))
    assert _many_escapes(octets) == plain_references.many_escapes(octets)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([piece for piece in PIECES if "%" not in piece]), max_size=600),
    st.integers(0, 3),
)
@example([], 0)
@example(["a"] * 511, 0)
@example(["a"] * 512, 0)
@example([" "] * 513, 0)
@example(["\x00", "😀"], 3)
def test_text_without_escapes_encoded_at_once_as_run_by_run(pieces: list[str], repeat: int) -> None:
    octets = _to_octets("".join(pieces) * (1 + repeat * 20))
    assert _literal(octets) == plain_references.literal(octets)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=400), st.integers(0, 3))
def test_octets_normalise_as_their_text_does(pieces: list[str], repeat: int) -> None:
    """A rule's value normalised as the file's octets, short or long, means its text."""
    text = "".join(pieces) * (1 + repeat * 20)
    octets = text.encode("utf-8", "surrogateescape")
    assert normalize_octets(octets) == normalize(text).encode("ascii")
    assert normalize_octets(octets + b"\xff\xc3") == normalize(text + "\udcff\udcc3").encode()


URLS = st.builds(
    "{}://{}{}{}".format,
    st.sampled_from(["http", "https", "HTTP", "ftp"]),
    st.from_regex(r"[a-zA-Z0-9.\-]{1,12}|\[::1\]|u@h", fullmatch=True),
    st.one_of(st.just(""), st.from_regex(r":[0-9]{0,7}", fullmatch=True)),
    st.sampled_from(["", "/", "/a?b", "?q", "#f", "\\x", ";p"]),
)


@settings(max_examples=1000)
@given(URLS)
def test_the_quick_origin_is_the_urlsplit_one(url: str) -> None:
    def outcome(function: Any) -> str:
        try:
            return str(function(url))
        except ValueError:
            return "ValueError"

    assert outcome(origin_of) == outcome(_origin_by_urlsplit)


def test_a_network_path_reference_names_a_host_a_path_may_start_with_two_slashes() -> None:
    # docs/guides/engine.rst: ``//host/x`` is read as RFC 3986 reads it.
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: //private\nAllow: /\nDisallow: /private\n")
    by_host = robots.explain("//host/private/x", "bot")
    in_path = robots.explain("https://example.com//private", "bot")
    assert by_host.rule is not None
    assert by_host.rule.pattern == "/private"
    assert in_path.rule is not None
    assert in_path.rule.pattern == "//private"
