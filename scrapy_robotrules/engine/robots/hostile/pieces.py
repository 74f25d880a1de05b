"""How the automaton reads a path: overlapping pieces, each text once.

A run of one character, or text repeating every few characters, is many
equal pieces: read once, where the text is last, they are not hundreds of
thousands of reports of the needles nested in them. A path whose short
pieces are mostly distinct is read in long ones: fewer calls, each with
fewer reports than a flood could hold in memory at once.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from operator import itemgetter

__all__ = ["Found", "read", "split"]

Found = dict[int, tuple[int, tuple[int, int, int]]]
"""Needle -> where it was seen last: (start of the piece read, (needle, start, end) in it)."""

_STRIDE, _LONG_STRIDE = 448, 2048
_SECOND = itemgetter(1)


def split(path: str, overlap: int) -> list[tuple[str, int]]:
    """The pieces to read, each with where it starts (last), in path order.

    ``overlap``: the longest needle's length less one, so that each needle
    seen in the path is whole in some piece.
    """
    size = len(path)
    if size <= _STRIDE + overlap:
        return [(path, 0)]
    pieces = _pieces(path, _STRIDE, overlap)
    # Mostly distinct (the first and last always are): fewer, longer pieces
    # cost fewer calls.
    if 2 * (len(pieces) - 2) > (size - overlap) // _STRIDE:
        pieces = _pieces(path, _LONG_STRIDE, overlap)
    return list(pieces.items())


def read(
    find: Callable[..., list[tuple[int, int, int]]],
    pieces: Iterable[tuple[str, int]],
    found: Found,
    kept: array[int] | None,
    budget: int,
) -> int:
    """Read ``pieces`` into ``found`` until more than ``budget`` reports came back.

    ``kept`` maps the automaton's needles to the index's, when they differ.
    Returns the budget left (below zero: stopped there).
    """
    for piece, start in pieces:
        matches = find(piece, overlapping=True)
        if not matches:
            continue
        # Matches come by end: the last of a needle is where it was seen last.
        if kept is None:
            last = {match[0]: match for match in matches}
        else:
            last = {kept[match[0]]: match for match in matches}
        for needle, match in last.items():
            found[needle] = (start, match)
        budget -= len(matches)
        if budget < 0:
            break
    return budget


def _pieces(path: str, stride: int, overlap: int) -> dict[str, int]:
    """Pieces of ``path`` ``stride`` apart, each with ``overlap`` more characters, each
    text once with where it starts last, in path order."""
    starts = range(0, max(len(path) - overlap, 1), stride)
    width = stride + overlap
    # A later copy of a text replaces the earlier one's start.
    pieces = dict(zip([path[at : at + width] for at in starts], starts, strict=True))
    if len(pieces) < len(starts):
        pieces = dict(sorted(pieces.items(), key=_SECOND))
    return pieces
