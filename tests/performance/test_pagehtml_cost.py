"""What reading a page's head and links costs on hostile markup: bytes of memory, where it stops.

Counted, never timed: how much a fresh process's peak resident memory
(``VmHWM``, reset just before the reading) grows while it reads one page.
It counts what the HTML parser holds, which Python's allocator does not
see. The parser holds the attributes of the tag it is reading until that
tag ends, so a tag of a million attributes costs some times its bytes; a
reading that kept what it passed, or parsed past the end of the head or
past the limit, would cost as much again for every byte it went on. What
the readings find is ``tests/engine/page/test_pagehtml.py``'s to check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from scrapy_robotrules.crawl.config.table import LIMITS
from scrapy_robotrules.engine.page.html import DEFAULT_LIMIT

pytestmark = pytest.mark.performance

LARGEST = int(LIMITS["ROBOTRULES_PAGE_MAX_HTML"])
"""The largest ``ROBOTRULES_PAGE_MAX_HTML``: 10 MB read of a page."""
PER_BYTE = 32
"""Peak memory per byte read, at most: the text, the parser's copy, a tag's attributes twice
(the parser's, and the dictionary lxml hands over)."""
SLACK = 4_000_000
"""Bytes a reading may grow by whatever it reads (the allocator's arenas)."""

READER = """
import json, sys
from pathlib import Path

from scrapy_robotrules.engine.page.html import head_metas, nofollow_links


def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise LookupError(field)


def crawl(body):
    from scrapy.http import HtmlResponse

    from scrapy_robotrules.crawl.pages.head import response_metas

    return response_metas(HtmlResponse("https://site.test/", body=body), limit), []


path, limit, reading = sys.argv[1], int(sys.argv[2]), sys.argv[3]
read = {
    "head": lambda body: (head_metas(body, limit=limit, max_tags=None), []),
    "both": lambda body: (
        head_metas(body, limit=limit, max_tags=None), nofollow_links(body, limit=limit)
    ),
    "crawl": crawl,
}[reading]
read(b'<meta name="a" content="b"><a rel="nofollow" href="/x">')  # imports and first calls
body = Path(path).read_bytes()
Path("/proc/self/clear_refs").write_text("5")  # the peak is reset to the memory in use
before = status("VmRSS")
metas, links = read(body)
print(json.dumps({"grown": status("VmHWM") - before, "metas": list(metas), "links": len(links)}))
"""


def read_in_a_fresh_process(
    tmp_path: Path, page: bytes, limit: int, reading: str = "both"
) -> dict[str, object]:
    """What the reading found in ``page``, and by how many bytes the process's peak grew."""
    if sys.platform != "linux":
        pytest.skip("the peak of a process's memory is read in /proc/self (Linux)")
    path = tmp_path / "page.html"
    path.write_bytes(page)
    done = subprocess.run(
        [sys.executable, "-c", READER, str(path), str(limit), reading],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    print(f"{len(page):,} bytes, {limit:,} read at most ({reading}): {grown(found):,} bytes more")
    return found


def grown(found: dict[str, object]) -> int:
    value = found["grown"]
    assert isinstance(value, int)
    return value


HOSTILE_HEAD = b"<meta " + b"a=b " * 1_000_000
"""4 MB of one tag's attributes, never ended."""


def test_a_hostile_head_at_the_largest_limit_costs_its_bytes(tmp_path: Path) -> None:
    # As a crawl reads it, at the largest ROBOTRULES_PAGE_MAX_HTML: the tag
    # the page stops in is dropped, and its attributes are let go.
    found = read_in_a_fresh_process(tmp_path, HOSTILE_HEAD, LARGEST, "crawl")
    assert found["metas"] == []
    assert grown(found) <= PER_BYTE * len(HOSTILE_HEAD) + SLACK
    # Ended, with the wanted attributes after the flood: read, for the same bytes.
    ended = HOSTILE_HEAD + b'name="robots" content="noindex">'
    found = read_in_a_fresh_process(tmp_path, ended, LARGEST, "crawl")
    assert found["metas"] == [["robots", "noindex"]]
    assert grown(found) <= PER_BYTE * len(ended) + SLACK


def test_past_the_end_of_the_head_nothing_is_parsed(tmp_path: Path) -> None:
    # The same flood after the head, within the largest limit: the parser
    # stops at </head>. Only the text decoded is paid for, not the tag's
    # attributes (parsed, they would cost ten times as much).
    page = b'<head><meta name="robots" content="noindex"></head><body><p ' + HOSTILE_HEAD * 2
    found = read_in_a_fresh_process(tmp_path, page, LARGEST, "head")
    assert found["metas"] == [["robots", "noindex"]]
    assert grown(found) <= 2 * len(page) + SLACK


def test_a_large_page_costs_only_its_first_bytes(tmp_path: Path) -> None:
    # 20 MB of attributes past the default limit: read neither for the head nor the links.
    page = b'<html><body><a rel="nofollow" href="/x"><p ' + b"a=b " * 5_000_000
    found = read_in_a_fresh_process(tmp_path, page, DEFAULT_LIMIT)
    assert found["links"] == 1
    assert grown(found) <= PER_BYTE * DEFAULT_LIMIT + SLACK


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
        "<div>" * 200_000,
    ],
)
def test_hostile_markup_costs_its_bytes(tmp_path: Path, hostile: str) -> None:
    page = hostile.encode()
    found = read_in_a_fresh_process(tmp_path, page, LARGEST)
    assert grown(found) <= PER_BYTE * len(page) + SLACK


ATTRIBUTE_FLOODS: dict[str, Callable[[int], str]] = {
    "one name repeated": lambda n: "<meta " + "a=b " * (n // 4),
    "names all different": lambda n: "<meta " + "".join(f"a{i}=b " for i in range(n // 10)),
    "wanted ones last": lambda n: "<meta " + "a " * (n // 2) + 'name="robots" content="noindex">',
    "wanted one repeated": lambda n: "<meta " + "name=a " * (n // 7),
    "quoted values": lambda n: "<meta " + 'a="b" ' * (n // 6),
    "tags of attributes": lambda n: "<meta a=b a=b a=b>" * (n // 18),
    "links": lambda n: '<a rel=nofollow href="/x" class=c>' * (n // 34),
    "a body tag of different names": lambda n: (
        "<body><p " + "".join(f"a{i}=b " for i in range(n // 10)) + ">"
    ),
}


@pytest.mark.parametrize("flood", ATTRIBUTE_FLOODS.values(), ids=ATTRIBUTE_FLOODS.keys())
def test_attribute_floods_cost_their_bytes(tmp_path: Path, flood: Callable[[int], str]) -> None:
    page = flood(1_000_000).encode()
    found = read_in_a_fresh_process(tmp_path, page, LARGEST)
    assert grown(found) <= PER_BYTE * len(page) + SLACK
