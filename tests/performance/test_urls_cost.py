"""Percent-normalising a long path costs work per input, not per run or escape.

Counted, never timed: the runs and escapes the URL module hands to Python
one at a time (through its regexes' callbacks), on paths of 100,000
characters built to alternate what normalisation keeps and what it
changes. That the fast path normalises as its plain reference does is
``tests/engine/robots/test_urls.py``'s to check.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from scrapy_robotrules.engine.robots import urls
from scrapy_robotrules.engine.robots.urls import _to_octets, normalize
from tests.helpers import plain_references

pytestmark = pytest.mark.performance


def by_runs(text: str) -> str:
    return plain_references.normalize_long(_to_octets(text))


ADVERSARIAL = {
    "stray % and spaces": "/" + "% " * 50_000,
    "kept and encoded alternating": "/" + "a " * 50_000,
    "escapes and kept alternating": "/" + "a%2F" * 25_000,
    "two kinds of escapes alternating": "/" + "%41%2F" * 16_666,
    "non-ASCII and ASCII alternating": "/" + "aé" * 33_333,
    "few escapes among encoded runs": "/" + "a " * 50_000 + "%41" * 10,
}


class OneByOne:
    """The normaliser's regexes, counting the matches they hand to Python one at a time.

    Every run of octets, ``%`` and hex digits, or escape that the URL module
    handles in Python goes through ``sub`` with a callback (or, for at most
    ``_FEW_ESCAPES`` escapes, ``_by_escapes``): that is where work per run is.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        for name in ("_OCTET_WORK", "_ESCAPE", "_LITERAL_RUN", "_NOT_UNRESERVED"):
            monkeypatch.setattr(urls, name, _Counted(getattr(urls, name), self))


class _Counted:
    def __init__(self, pattern: re.Pattern[bytes], tally: OneByOne) -> None:
        self.pattern, self.tally = pattern, tally

    def sub(self, replace: Callable[[re.Match[bytes]], bytes], octets: bytes) -> bytes:
        def counted(match: re.Match[bytes]) -> bytes:
            self.tally.count += 1
            return replace(match)

        return self.pattern.sub(counted, octets)


@pytest.mark.parametrize("path", ADVERSARIAL.values(), ids=list(ADVERSARIAL))
def test_long_paths_are_normalised_without_work_per_run(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_by_one = OneByOne(monkeypatch)
    expected = by_runs(path)
    # The plain form (the reference) handles every run or escape in turn ...
    assert one_by_one.count >= 10_000
    one_by_one.count = 0
    assert normalize(path) == expected
    # ... the fast one a few at the ends of pieces cut at a few escapes at
    # most, whatever the length.
    assert one_by_one.count <= 2 * urls._FEW_ESCAPES
