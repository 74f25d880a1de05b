"""The head scanner's work and memory, on hostile markup and floods of attributes.

Counted, never timed: the characters the scanner's patterns look at (a
few times the text read, whatever the markup: no pass started again after
each tag), and the memory allocated at once while a page is read
(nothing kept per attribute passed). What the scanner finds is
``tests/engine/page/test_pagehtml.py``'s to check.
"""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Callable

import pytest

from scrapy_robotrules.engine.page import html as scanner_module
from scrapy_robotrules.engine.page.html import DEFAULT_LIMIT, head_metas, nofollow_links

pytestmark = pytest.mark.performance


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
