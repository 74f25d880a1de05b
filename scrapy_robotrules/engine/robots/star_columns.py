"""Wildcard rules as read, in columns, their values normalised in bulk (SPEC 4 and 5).

A hostile file holds tens of thousands of wildcard rules, and a
:class:`.Pattern` made per rule is an object and a parse per rule. The
line regex (:func:`.reading.member_columns`) cuts every value that starts
with ``/`` at its first star; here the cut values are percent-normalised
together (:func:`_normalised`) and those with several stars reduced to
what an index needs of a rule (its needle, priority and shape, as
:class:`.Pattern` would say), with no object per rule.
"""

from __future__ import annotations

from itertools import accumulate, chain, compress
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy_robotrules.engine.robots.urls import normalize, normalize_all, normalize_octets

if TYPE_CHECKING:
    from collections.abc import Iterator

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


def _picked(columns: tuple[Any, ...], mask: list[bool]) -> Iterator[Any]:
    """Each of the parallel ``columns`` cut to the rows where ``mask`` is true, same type."""
    return (type(column)(compress(column, mask)) for column in columns)


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

    def picked(self, mask: list[bool]) -> StarRules:
        """The rules where ``mask`` is true, in order."""
        return StarRules(*_picked(self, mask))


class ManyStars(NamedTuple):
    """Rules of two stars or more, as read: what an index needs of each, no pattern.

    Parallel columns: line, whether it allows, the normalised text before
    the first star, the needle, the priority and the shape (``FIND``,
    ``ENDS``, ``ALWAYS`` or ``GENERAL``), each as :class:`.Pattern` and
    :func:`.wildcards.shape_of` say, then the normalised text after the
    first star (further stars kept) and whether a ``$`` ends the value. The
    piece a ``FIND`` or ``ENDS`` rule needs is its needle; a ``GENERAL``
    rule's pattern is made from its prefix, tail and anchor when it must
    be tried.
    """

    lines: list[int]
    allows: list[bool]
    prefixes: list[str]
    needles: list[str]
    priorities: list[int]
    shapes: bytearray
    tails: list[str]
    anchored: list[bool]

    def picked(self, mask: list[bool]) -> ManyStars:
        """The rules where ``mask`` is true, in order."""
        return ManyStars(*_picked(self, mask))


def no_many() -> ManyStars:
    return ManyStars([], [], [], [], [], bytearray(), [], [])


def needs_cutting(rules: StarRules) -> bool:
    """Whether some value needs normalising, or holds several stars.

    The values are joined and scanned in C, not tested one by one. A fast
    path: its plain reference, value by value, is in
    ``tests/helpers/plain_references.py``.
    """
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


def _normalised(values: list[bytes]) -> list[bytes]:
    """``values`` normalised as octets.

    A few C calls in all, not a call per value: the values are normalised
    joined by ``#``, a reserved character, kept as it is, that no escape
    decodes to and that stops any escape before it, so each value comes
    out as it would alone. (A rule's value never holds a ``#``: it starts a
    comment.) A fast path: its plain reference, value by value, is in
    ``tests/helpers/plain_references.py``.
    """
    if not values:
        return []
    out = normalize_octets(b"#".join(values)).split(b"#")
    if len(out) != len(values):  # never so: the line regex lets no "#" through
        return [normalize_octets(value) for value in values]
    return out


def cut_starred(
    rules: StarRules,
) -> tuple[StarRules, ManyStars, list[tuple[int, bool, bytes]]]:
    """``rules`` as cut by the line regex, normalised: (one star, several stars, plain).

    Values of one star at most stay :class:`StarRules`, normalised; those
    of several become :class:`ManyStars`; those of neither star nor ``$``
    (a plain prefix with escapes or non-ASCII) are plain rules: (line,
    allows, normalised prefix). A hostile file's rules are all of one
    kind: its columns are then taken whole, not sorted out.
    """
    if b"*" not in b"".join(rules.pieces):
        # One scan: most files (and a hostile one) hold no value of several stars.
        one, many = rules, no_many()
    else:
        several = [b"*" in piece for piece in rules.pieces]
        if all(several):
            one, many = StarRules([], [], [], [], [], []), _many_stars(rules)
        else:
            one = rules.picked([not it for it in several])
            many = _many_stars(rules.picked(several))
    lines, allows, prefixes, stars, pieces, anchors = one
    heads = _normalised(prefixes)
    tails = _normalised(pieces)
    if b"" not in stars:
        return StarRules(lines, allows, heads, stars, tails, anchors), many, []
    # A star or an anchor makes a wildcard rule; else it is a plain prefix.
    wild = [bool(star or anchor) for star, anchor in zip(stars, anchors, strict=True)]
    plain = [
        (line, allow, head)
        for line, allow, head, is_wild in zip(lines, allows, heads, wild, strict=True)
        if not is_wild
    ]
    kept = StarRules(lines, allows, heads, stars, tails, anchors).picked(wild)
    return kept, many, plain


def _many_stars(rules: StarRules) -> ManyStars:
    heads = _texts(rules.prefixes)
    anchored = [bool(anchor) for anchor in rules.anchors]
    needles, priorities, shapes, tails = star_shapes(heads, rules.pieces, anchored)
    return ManyStars(rules.lines, rules.allows, heads, needles, priorities, shapes, tails, anchored)


def star_shapes(
    heads: list[str], tails: list[bytes], anchored: list[bool]
) -> tuple[list[str], list[int], bytearray, list[str]]:
    """Needle, priority, shape and normalised tail of values ``head*tail[$]`` whose
    ``tail`` holds a star.

    ``heads`` normalised; each tail's pieces (between its stars) are
    normalised here, together (:func:`_normalised_tails`). As
    :class:`.Pattern` says: the priority counts each star and the ``$`` as
    one; the needle is the last piece of an anchored value unless a piece
    between stars is longer, else the first longest piece after the prefix.
    """
    counts = [tail.count(b"*") + 1 for tail in tails]
    texts = _normalised_tails(tails, counts)
    needles: list[str] = []
    priorities: list[int] = []
    shapes = bytearray()
    for head, text, anchor in zip(heads, texts, anchored, strict=True):
        needle, shape = _needle_and_shape(text.split("*"), anchor=anchor)
        needles.append(needle)
        shapes.append(shape)
        # Each star and the "$" counting one (SPEC 5).
        priorities.append(len(head) + 1 + len(text) + anchor)
    return needles, priorities, shapes, texts


def _needle_and_shape(parts: list[str], *, anchor: bool) -> tuple[str, int]:
    """Needle and shape (see :func:`.wildcards.shape_of`) of a value whose text after its
    first star is cut into ``parts`` at its other stars."""
    if anchor:
        # The last piece must end the path; a longer piece before it is the needle.
        last, middle = parts[-1], parts[:-1]
        longest = max(middle, key=len)
        needle = longest if len(longest) > len(last) else last
        return needle, GENERAL if any(middle) else ENDS
    filled = len(parts) - parts.count("")
    shape = ALWAYS if filled == 0 else FIND if filled == 1 else GENERAL
    return max(parts, key=len), shape


def _normalised_tails(tails: list[bytes], counts: list[int]) -> list[str]:
    """Each tail decoded, its pieces normalised, its stars kept.

    The pieces of all tails are normalised at once, joined by ``#`` (see
    :func:`_normalised`), as the stars would be encoded; they are then
    joined again by tail. A fast path: its plain reference, piece by
    piece, is in ``tests/helpers/plain_references.py``.
    """
    if not tails:
        return []
    text = b"\n".join(tails).decode("utf-8", "surrogateescape")
    if text.isascii() and "%" not in text:
        # Nothing to normalise: the line regex lets no other such character through.
        return text.split("\n")
    pieces = normalize(text.replace("*", "#").replace("\n", "#")).split("#")
    # The last piece of each tail is followed by a line break, the others by a star.
    after = ["*"] * len(pieces)
    for end in accumulate(counts):
        after[end - 1] = "\n"
    joined = "".join(chain.from_iterable(zip(pieces, after, strict=True)))
    return joined[:-1].split("\n")
