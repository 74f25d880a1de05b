"""Wildcard rules as read, in columns, their values normalised in bulk (SPEC 4 and 5; issue 12).

A hostile file holds tens of thousands of wildcard rules, and a
:class:`.Pattern` made per rule costs microseconds each: 18,000
``Disallow: /*x1*y1*.php$`` took 90 ms to read one at a time. The line
regex (:func:`.reading.member_columns`) cuts every value that starts with
``/`` at its first star; here the cut values are percent-normalised
together (:func:`.normalize_all`) and those with several stars reduced to
what an index needs of a rule (its needle, priority and shape, as
:class:`.Pattern` would say), with no object per rule.
"""

from __future__ import annotations

import operator
from itertools import compress, repeat
from typing import NamedTuple

from ..urls import normalize, normalize_all

__all__ = [
    "ALWAYS",
    "ENDS",
    "EXACT",
    "FIND",
    "GENERAL",
    "ManyStars",
    "StarRules",
    "cut_starred",
    "needs_cutting",
    "star_shapes",
]

FIND, ENDS, GENERAL, ALWAYS, EXACT = 0, 1, 2, 3, 4
"""How a path in a rule's bucket is matched: see :func:`.wildcards.shape_of`."""


class StarRules(NamedTuple):
    """Rules of plain characters around at most one ``*``, as read, not compiled.

    Parallel lists: line, whether it allows, the text before the star, the
    star (or nothing), the text after it (the needle), and ``$`` or
    nothing. ``/a/*``, ``/*.php$``, ``/a$``: most wildcard rules of real
    files. Many of them (a hostile file's 24,380 ``Disallow: /*<8
    letters>``) go to an automaton without one object made per rule.
    """

    lines: list[int]
    allows: list[bool]
    prefixes: list[bytes]
    stars: list[bytes]
    pieces: list[bytes]
    anchors: list[bytes]


class ManyStars(NamedTuple):
    """Rules of two stars or more, as read: what an index needs of each, no pattern.

    Parallel columns: line, whether it allows, the normalised text before
    the first star, the needle, the priority and the shape (``FIND``,
    ``ENDS``, ``ALWAYS`` or ``GENERAL``), each as :class:`.Pattern` and
    :func:`.wildcards.shape_of` say. The piece a ``FIND`` or ``ENDS`` rule
    needs is its needle; a ``GENERAL`` rule is read again from the file
    when it must be tried.
    """

    lines: list[int]
    allows: list[bool]
    prefixes: list[str]
    needles: list[str]
    priorities: list[int]
    shapes: bytearray


def no_many() -> ManyStars:
    return ManyStars([], [], [], [], [], bytearray())


def needs_cutting(rules: StarRules) -> bool:
    """Whether some value needs normalising, or holds several stars (two C scans)."""
    heads = b"".join(rules.prefixes)
    tails = b"".join(rules.pieces)
    return (
        b"*" in tails
        or b"%" in tails
        or b"%" in heads
        or not tails.isascii()
        or not heads.isascii()
    )


def _texts(values: list[bytes]) -> list[str]:
    """``values`` decoded (undecodable bytes as surrogate escapes) and normalised, together."""
    if not values:
        return []
    texts = b"\n".join(values).decode("utf-8", "surrogateescape").split("\n")
    return normalize_all(texts)


def _as_bytes(texts: list[str]) -> list[bytes]:
    """Normalised texts (ASCII) as bytes, in two C calls."""
    return "\n".join(texts).encode("ascii").split(b"\n") if texts else []


def cut_starred(
    rules: StarRules,
) -> tuple[StarRules, ManyStars, list[tuple[int, bool, bytes]]]:
    """``rules`` as cut by the line regex, normalised: (one star, several stars, plain).

    Values of one star at most stay :class:`StarRules`, normalised; those
    of several become :class:`ManyStars`; those of neither star nor ``$``
    (a plain prefix with escapes or non-ASCII) are plain rules: (line,
    allows, normalised prefix).
    """
    lines, allows, prefixes, stars, pieces, anchors = rules
    several = list(map(bytes.__contains__, pieces, repeat(b"*")))
    one = list(map(operator.not_, several))
    heads = _texts(list(compress(prefixes, one)))
    tails = _texts(list(compress(pieces, one)))
    one_stars = list(compress(stars, one))
    one_anchors = list(compress(anchors, one))
    one_lines = list(compress(lines, one))
    one_allows = list(compress(allows, one))
    # A star or an anchor makes a wildcard rule; else it is a plain prefix.
    wild = list(map(bool, map(bytes.__add__, one_stars, one_anchors)))
    plain = list(
        compress(
            zip(one_lines, one_allows, _as_bytes(heads), strict=True), map(operator.not_, wild)
        )
    )
    kept = StarRules(
        list(compress(one_lines, wild)),
        list(compress(one_allows, wild)),
        _as_bytes(list(compress(heads, wild))),
        list(compress(one_stars, wild)),
        _as_bytes(list(compress(tails, wild))),
        list(compress(one_anchors, wild)),
    )
    if not any(several):
        return kept, no_many(), plain
    many_heads = _texts(list(compress(prefixes, several)))
    many_tails = list(compress(pieces, several))
    anchored = list(map(bool, compress(anchors, several)))
    needles, priorities, shapes = star_shapes(many_heads, many_tails, anchored)
    many = ManyStars(
        list(compress(lines, several)),
        list(compress(allows, several)),
        many_heads,
        needles,
        priorities,
        shapes,
    )
    return kept, many, plain


def star_shapes(
    heads: list[str], tails: list[bytes], anchored: list[bool]
) -> tuple[list[str], list[int], bytearray]:
    """Needle, priority and shape of values ``head*tail[$]`` whose ``tail`` holds a star.

    ``heads`` normalised; each tail's pieces (between its stars) are
    normalised here, together: joined by ``#``, which is kept as it is and
    stops any escape before it (see :func:`.normalize_all`), as stars would
    be encoded. As :class:`.Pattern` says: the priority counts each star
    and the ``$`` as one; the needle is the last piece of an anchored
    value unless a piece between stars is longer, else the first longest
    piece after the prefix.
    """
    counts = list(map((1).__add__, map(bytes.count, tails, repeat(b"*"))))
    text = b"\n".join(tails).decode("utf-8", "surrogateescape")
    if text.isascii() and "%" not in text:
        # Nothing to normalise (percent-normalising keeps every other ASCII
        # character the line regex lets through).
        pieces = text.replace("\n", "*").split("*")
    else:
        pieces = normalize(text.replace("*", "#").replace("\n", "#")).split("#")
    needles: list[str] = []
    priorities: list[int] = []
    shapes = bytearray()
    add_needle, add_priority, add_shape = needles.append, priorities.append, shapes.append
    start = 0
    for head, count, anchor in zip(heads, counts, anchored, strict=True):
        parts = pieces[start : start + count]
        start += count
        # Each star and the "$" counting one (SPEC 5).
        add_priority(len(head) + count + sum(map(len, parts)) + anchor)
        if anchor:
            last = parts.pop()
            longest = max(parts, key=len)
            add_needle(longest if len(longest) > len(last) else last)
            add_shape(GENERAL if parts.count("") < len(parts) else ENDS)
        else:
            add_needle(max(parts, key=len))
            filled = count - parts.count("")
            add_shape(FIND if filled == 1 else ALWAYS if not filled else GENERAL)
    return needles, priorities, shapes
