"""Every ``X-Robots-Tag`` line and robots meta tag is read; what the rules keep is not more.

Counted, never timed: the values read (each once, every one), and what the
rules keep (rules, characters of their sources, lines of ``explain()``),
which stays the same whether a response has a thousand header lines or twenty
thousand.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

import pytest

from scrapy_robotrules.engine.page.directives import (
    KNOWN,
    MAX_KEPT,
    MAX_VALUE_CHARS,
    PageDirectives,
    parse_page_directives,
)

pytestmark = pytest.mark.performance

AGENT = "ExampleBot/1.0"
T = TypeVar("T")


class Counted(Generic[T]):
    """Values handed out one at a time, counted as they are read."""

    def __init__(self, values: Iterator[T]) -> None:
        self.values = values
        self.read = 0

    def __iter__(self) -> Iterator[T]:
        for value in self.values:
            self.read += 1
            yield value


def flood(lines: int) -> Iterator[str]:
    """``lines`` header lines that say the same few things again, another crawler's name, an
    unknown rule and a long value among them; ``nofollow`` in the last one."""
    for n in range(lines - 1):
        yield ("noarchive, max-snippet: 50", f"bot{n}: noindex", f"rule-{n}", "x" * 10_000)[n % 4]
    yield "nofollow"


def kept(page: PageDirectives) -> tuple[int, int, int]:
    """Rules kept, characters of the values they were read from, and lines ``explain()`` gives."""
    rules = [*page.applied, *page.other_crawlers, *page.unknown, *page.malformed]
    sources = {id(rule.source): len(rule.source.value) for rule in rules}
    return len(rules), sum(sources.values()), len(page.explain())


@pytest.mark.parametrize("lines", [1_000, 20_000])
def test_many_header_lines_are_all_read_and_keep_a_bounded_few(lines: int) -> None:
    headers = Counted(flood(lines))
    metas = Counted(iter([("robots", "noarchive")] * lines))
    page = parse_page_directives(headers, metas, AGENT)
    assert (headers.read, metas.read) == (lines, lines)  # every value, once
    assert page.nofollow
    assert page.sources("nofollow")[0].source.number == lines
    assert page.restrictions == {"noarchive", "nofollow"}
    assert page.max_snippet == 50
    rules, characters, explained = kept(page)
    bound = 4 * MAX_KEPT + len(KNOWN)  # the first of each kind, and the rules deciding
    assert rules <= bound
    assert characters <= bound * MAX_VALUE_CHARS
    assert explained <= bound + 8


def test_what_is_kept_does_not_grow_with_the_lines() -> None:
    few = parse_page_directives(flood(1_000), (), AGENT)
    many = parse_page_directives(flood(20_000), (), AGENT)
    assert kept(few) == kept(many)
