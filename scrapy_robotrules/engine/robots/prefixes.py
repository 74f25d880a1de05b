"""Plain prefix rules found without scanning them: sorted prefixes and each one's parent (SPEC 4).

Most rules are plain prefixes (``Disallow: /private/``). A path matches
those it starts with; they all lie on one chain: the greatest prefix not
above the path, or one of its ancestors, is the longest matching one, and
each prefix's parent is its longest proper prefix in the set.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import AnyStr, Generic

__all__ = ["ROOT", "SLASH", "PrefixSet", "prefix_ids"]

ROOT, SLASH = -2, -1
"""Prefix ids of rules whose text before the ``*`` is empty, or ``/``: every path has it."""

_UNKNOWN = -2
_SHORT = 1 << 15  # below this many items, indexes fit in two bytes


def _shared_start(first: AnyStr, second: AnyStr) -> AnyStr:
    """The longest common beginning of two strings (or two byte strings)."""
    end = min(len(first), len(second))
    for i in range(end):
        if first[i] != second[i]:
            return first[:i]
    return first[:end]


class PrefixSet(Generic[AnyStr]):
    """Sorted strings, asked which of them ``text`` starts with.

    The greatest string not above ``text`` is either one, or shares a
    beginning with it; every answer then starts that shared beginning, so
    the search goes on with it, shorter each time. A string's parent (its
    longest proper prefix in the set) is found once, when first needed.
    """

    __slots__ = ("_parents", "items")

    def __init__(self, items: list[AnyStr]) -> None:
        self.items: list[AnyStr] = items
        self._parents: array[int] | None = None

    def _longest(self, text: AnyStr, end: int) -> int:
        items = self.items
        while True:
            i = bisect_right(items, text, 0, end) - 1
            if i < 0:
                return -1
            candidate = items[i]
            if text.startswith(candidate):
                return i
            text = _shared_start(candidate, text)
            end = i

    def parent(self, i: int) -> int:
        parents = self._parents
        if parents is None:
            size = len(self.items)
            parents = self._parents = array("h" if size < _SHORT else "i", [_UNKNOWN]) * size
        parent = parents[i]
        if parent == _UNKNOWN:
            parent = parents[i] = self._longest(self.items[i][:-1], i)
        return parent

    def longest(self, text: AnyStr) -> int:
        """Index of the longest string that ``text`` starts with, or -1."""
        items = self.items
        i = bisect_right(items, text) - 1
        while i >= 0 and not text.startswith(items[i]):
            i = self.parent(i)
        return i

    def all(self, text: AnyStr) -> list[int]:
        """Indexes of every string that ``text`` starts with, longest first."""
        found = []
        i = self.longest(text)
        while i >= 0:
            found.append(i)
            i = self.parent(i)
        return found


def prefix_ids(
    prefixes: list[str],
) -> tuple[PrefixSet[str] | None, array[int] | None, int]:
    """The distinct prefixes other than ``""`` and ``/``, and each rule's prefix id.

    When every rule has the same prefix, no array: that one id.
    """
    distinct = set(prefixes)
    roots = {"": ROOT, "/": SLASH}
    items = sorted(distinct - roots.keys())
    roots.update(zip(items, range(len(items)), strict=True))
    found = PrefixSet(items) if items else None
    if len(distinct) == 1:
        return found, None, roots[prefixes[0]]
    return found, array("i", [roots[prefix] for prefix in prefixes]), SLASH
