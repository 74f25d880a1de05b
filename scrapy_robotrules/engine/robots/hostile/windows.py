"""A short path's needles looked up in a dict until an automaton pays (SPEC 4).

Building the automaton costs work in proportion to the characters of all
the file's needles, as much as the rest of its first check, whatever the
path. A path of ``L`` characters holds ``L - n + 1`` windows of each needle
length ``n``: looking them up in a dict of the needles (which the index
makes anyway, to find the repeated ones) costs a lookup per window, many
times what a walk of the built automaton costs. So the choice is rent or buy (ski rental): when
the needles are of few lengths, a path of at most :data:`WINDOWS` windows is
looked up while the windows looked up so far, this path's included, cost
less than building the automaton would (:func:`build_cost`); past that, or
for a longer path, the automaton is built and used from then on. A file
checked a few times never builds it; one checked thousands of times pays at
most about twice what the better of the two would have cost it. Files whose
needles are of more lengths build it on their first check: else
a 2,083-character path after a short first one would pay for it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

from scrapy_robotrules.engine.robots.hostile.pieces import Found

__all__ = [
    "BUILD_WINDOWS_PER_CHAR",
    "SHORT_PATH",
    "WINDOWS",
    "Windows",
    "build_cost",
    "by_text",
    "windows_in",
]

SHORT_PATH = 2083
"""Paths up to this long (Scrapy's default ``URLLENGTH_LIMIT``) are looked up, for a file
whose needles are (see :func:`Windows.sizes_for`), until the automaton would cost less."""
WINDOWS = 2 * SHORT_PATH
"""Windows a path may hold to be looked up; a longer one builds the automaton."""
BUILD_WINDOWS_PER_CHAR = 0.75
"""Windows looked up that cost as much as one character of needles built into the automaton.

Measured on hostile files: a character of needles costs the automaton
about half a window to a whole one (the most for random letters, the
least for percent-encoded needles, whose escapes share their states), so
this estimate is off by less than a factor of two either way. Calibrated
by time: counted in CPU instructions, building the automaton looks
cheaper than it is, since it runs fewer of them in the same time than the
lookups do."""
# What a needle weighs in the dict and its list, besides its characters (an upper estimate).
_BYTES_PER_NEEDLE = 160


def windows_in(length: int, sizes: Iterable[int]) -> int:
    """How many windows of the needle ``sizes`` a path of ``length`` characters holds."""
    return sum(max(0, length - size + 1) for size in sizes)


def build_cost(chars: int) -> int:
    """Windows looked up that cost about as much as an automaton over ``chars`` characters."""
    return int(chars * BUILD_WINDOWS_PER_CHAR)


class Windows:
    """The needles by text (text -> index; those left to :class:`.Runs` out), and their lengths.

    ``looked_up``: windows looked up so far, which may not pass ``budget``
    (:func:`build_cost` of the needles); made again after the cache took
    it back, it counts from nought again. ``weight``: bytes held, for the
    process's cache of automata, which lends this as it lends an automaton
    (dropped under its budget, made again from the needles on demand).
    """

    __slots__ = ("_lookup", "_sizes", "budget", "looked_up", "weight")

    def __init__(
        self,
        needles: list[str],
        left_out: Iterable[int],
        sizes: tuple[int, ...],
        chars: int,
        lookup: dict[str, int] | None = None,
    ) -> None:
        """``chars``: what the automaton would be built from; ``lookup``: each of
        ``needles`` -> its index, if the caller has it."""
        if lookup is None:
            lookup = dict(zip(needles, range(len(needles)), strict=True))
        self._lookup = lookup
        for i in left_out:
            del self._lookup[needles[i]]
        self._sizes = sizes
        self.budget = build_cost(chars)
        self.looked_up = 0
        self.weight = len(needles) * _BYTES_PER_NEEDLE + sum(map(len, needles))

    @staticmethod
    def sizes_for(lengths: set[int]) -> tuple[int, ...] | None:
        """The needle lengths to look up, if a path of :data:`SHORT_PATH` characters can be."""
        return tuple(sorted(lengths)) if windows_in(SHORT_PATH, lengths) <= WINDOWS else None

    @staticmethod
    def worth(length: int, sizes: tuple[int, ...], chars: int) -> bool:
        """Whether a path of ``length`` is worth making the dict for (not yet made)."""
        return windows_in(length, sizes) <= min(WINDOWS, build_cost(chars))

    def found(self, path: str) -> Found | None:
        """The needles in ``path``, each with where it was seen last, as the automaton says
        it (:data:`.pieces.Found`, the whole path being one piece); ``None`` if the path
        holds more than :data:`WINDOWS` windows or the automaton would now cost less."""
        count = windows_in(len(path), self._sizes)
        if count > WINDOWS or self.looked_up + count > self.budget:
            return None
        self.looked_up += count
        found: Found = {}
        get = self._lookup.get
        for size in self._sizes:
            count = len(path) - size + 1
            if count <= 0:
                continue
            # Needle -> its last window's start; windows of no needle under -1.
            last = {get(path[i : i + size], -1): i for i in range(count)}
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
    firsts = [ids[needle] for needle in needles]
    following = array("i", [-1]) * len(needles)
    for i, first in enumerate(firsts):
        if first != i:  # rule i repeats the needle of rule first
            following[i] = following[first]
            following[first] = i
    # Needles are numbered in ``ids`` order: map to rules.
    number = dict(zip(ids.values(), range(len(ids)), strict=True))
    needle_of = array("i", [number[first] for first in firsts])
    return None, array("i", ids.values()), following, needle_of, list(ids)
