"""A short path's needles looked up in a dict, window by window: no automaton (SPEC 4; issue 12).

Building the automaton over a hostile file's 24,000 needles costs about
12 ms, a third of its first check, whatever the path. A path of ``L``
characters holds ``L - n + 1`` windows of each needle length ``n``: looked
up in a dict of the needles (which the index makes anyway, to find the
repeated ones), a path of Scrapy's default URL length limit (2,083
characters) costs about 0.2 ms for needles of one length. So when the
needles are of few lengths, a path of at most :data:`WINDOWS` windows is
answered this way, and the automaton is built for the first longer path
only: a crawl that keeps to that limit never builds it. Files whose
needles are of more lengths build it on their first check, as before:
else a 2,083-character path after a short first one would pay for it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import compress, repeat

from .pieces import Found

__all__ = ["SHORT_PATH", "WINDOWS", "Windows", "by_text", "windows_in"]

SHORT_PATH = 2083
"""Paths up to this long (Scrapy's default ``URLLENGTH_LIMIT``) never build an automaton
for a file whose needles are looked up (see :func:`Windows.sizes_for`)."""
WINDOWS = 2 * SHORT_PATH
"""Windows a path may hold to be looked up (0.4 ms at most); a longer one builds the automaton."""
# What a needle weighs in the dict and its list, besides its characters (an upper estimate).
_BYTES_PER_NEEDLE = 160


def windows_in(length: int, sizes: Iterable[int]) -> int:
    """How many windows of the needle ``sizes`` a path of ``length`` characters holds."""
    return sum(max(0, length - size + 1) for size in sizes)


class Windows:
    """The needles by text (text -> index; those left to :class:`.Runs` out), and their lengths.

    ``weight``: bytes held, for the process's cache of automata, which
    lends this as it lends an automaton (dropped under its budget, made
    again from the needles on demand).
    """

    __slots__ = ("_lookup", "_sizes", "weight")

    def __init__(
        self,
        needles: list[str],
        left_out: Iterable[int],
        sizes: tuple[int, ...],
        lookup: dict[str, int] | None = None,
    ) -> None:
        """``lookup``: each of ``needles`` -> its index, if the caller has it."""
        if lookup is None:
            lookup = dict(zip(needles, range(len(needles)), strict=True))
        self._lookup = lookup
        for i in left_out:
            del self._lookup[needles[i]]
        self._sizes = sizes
        self.weight = len(needles) * _BYTES_PER_NEEDLE + sum(map(len, needles))

    @staticmethod
    def sizes_for(lengths: set[int]) -> tuple[int, ...] | None:
        """The needle lengths to look up, if a path of :data:`SHORT_PATH` characters can be."""
        return tuple(sorted(lengths)) if windows_in(SHORT_PATH, lengths) <= WINDOWS else None

    def found(self, path: str) -> Found:
        """The needles in ``path``, each with where it was seen last, as the automaton says
        it (:data:`.pieces.Found`, the whole path being one piece)."""
        found: Found = {}
        get = self._lookup.get
        for size in self._sizes:
            count = len(path) - size + 1
            if count <= 0:
                continue
            # Needle -> its last window's start, in C; windows of no needle under -1.
            windows = [path[i : i + size] for i in range(count)]
            last = dict(zip(map(get, windows, repeat(-1)), range(count), strict=True))
            last.pop(-1, None)
            for needle, start in last.items():
                found[needle] = (0, (needle, start, start + size))
        return found


def by_text(
    needles: list[str],
) -> tuple[
    dict[str, int] | None, array[int] | None, array[int] | None, array[int] | None, list[str]
]:
    """Each needle once: (text -> number, first, next, needle of, texts by number).

    Needle ``i`` stands for rule ``i``, unless some repeat: the automaton
    is then given each once, ``first`` maps a needle's number to its first
    rule, and rules sharing a needle are chained through ``next`` (rule ->
    next rule with its needle, or -1); ``needle of`` maps a rule to its
    needle's number. Distinct needles (a hostile file's) need none of these
    arrays, and the dict made to find repeats is the one to look them up in
    (else none is made here: ``None``).
    """
    ids = dict(zip(reversed(needles), range(len(needles) - 1, -1, -1), strict=True))
    if len(ids) == len(needles):
        return ids, None, None, None, needles
    firsts = list(map(ids.__getitem__, needles))
    following = array("i", [-1]) * len(needles)
    # Only the rules that repeat a needle are chained in Python.
    for i in compress(range(len(needles)), map(int.__ne__, firsts, range(len(needles)))):
        first = firsts[i]
        following[i] = following[first]
        following[first] = i
    # Needles are numbered in ``ids`` order: map to rules.
    number = dict(zip(ids.values(), range(len(ids)), strict=True))
    needle_of = array("i", map(number.__getitem__, firsts))
    return None, array("i", ids.values()), following, needle_of, list(ids)
