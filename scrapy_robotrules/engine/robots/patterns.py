"""Rule patterns: ``*`` wildcards, the final ``$`` anchor, and matching without backtracking.

SPEC 4 (patterns; URLs are :mod:`.urls`).

A pattern is split at its wildcards into literal pieces. Matching places each
piece at its leftmost occurrence after the previous one (``str.find``), which
is enough to decide a prefix match and can never blow up: the worst case is
one linear scan per piece, so ``/*a*a*a*a*b`` against 100,000 ``a`` answers in
microseconds. (Protego's regex translation of the same pattern was a ReDoS.)
"""

from __future__ import annotations

import re

from scrapy_robotrules.engine.robots.urls import (
    KEEP,
    normalize,
    normalize_all,
    origin_of,
    url_path_and_query,
)

__all__ = ["Pattern", "compile_matcher", "resolve_value", "simple_values"]

_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Whether any piece between wildcards needs percent-normalising: one scan of
# the whole value instead of one call per piece.
_PIECES_NEED_WORK = re.compile(f"[^{KEEP}*]")


class Pattern:
    """A rule value with wildcards or an end anchor. (Plain prefixes need no object.)"""

    __slots__ = ("anchored", "last", "middle", "needle", "prefix", "priority")

    def __init__(self, value: str) -> None:
        anchored = value[-1:] == "$"
        if anchored:
            value = value[:-1]
        pieces = value.split("*")
        # SPEC 4: length of the normalised pattern, each wildcard and the
        # final anchor counting one octet. Unnormalised, that is the length
        # of the value as written.
        priority = len(value) + anchored
        if _PIECES_NEED_WORK.search(value) is not None:
            pieces = [normalize(piece) for piece in pieces]
            priority = sum(map(len, pieces)) + len(pieces) - 1 + anchored
        self.prefix: str = pieces[0]
        self.anchored: bool = anchored
        self.priority: int = priority
        # The last piece of an anchored pattern must end the path; the pieces
        # in between are found left to right. Empty pieces (from ``**``) are
        # no-ops and are dropped, so a line of a million ``*`` costs nothing.
        if anchored and len(pieces) > 1:
            last: str | None = pieces[-1]
            middle = pieces[1:-1]
        else:
            last = None
            middle = pieces[1:]
        if "" in middle:
            middle = [piece for piece in middle if piece]
        self.last = last
        self.middle: tuple[str, ...] = tuple(middle)
        # A piece any matching path must contain: a cheap ``in`` test turns
        # most paths away before the full match is tried.
        needle = last or ""
        for piece in middle:
            if len(piece) > len(needle):
                needle = piece
        self.needle: str = needle

    def matches(self, path: str) -> bool:
        """Whether the normalised ``path`` matches."""
        prefix = self.prefix
        if not path.startswith(prefix):
            return False
        pos = len(prefix)
        for piece in self.middle:
            found = path.find(piece, pos)
            if found < 0:
                return False
            pos = found + len(piece)
        last = self.last
        if last is not None:
            return path.endswith(last) and len(path) - len(last) >= pos
        if self.anchored:
            # Anchored, no wildcard: the whole path is the prefix.
            return len(path) == pos
        return True


def resolve_value(value: str, robots_url: str | None) -> str | None:
    """The pattern a rule's value stands for, or ``None`` when the rule is ignored.

    A value that is an absolute URL counts only when it names the robots.txt's
    own origin; its path and query are then the pattern (SPEC 4,
    WWW::RobotRules). Other values are returned unchanged.
    """
    if value[:1] in ("/", "*") or _ABSOLUTE.match(value) is None:
        return value
    if robots_url is None:
        return None
    try:
        same_origin = origin_of(value) == origin_of(robots_url)
    except ValueError:
        return None
    if not same_origin:
        return None
    # Path and query as written (an empty query "?" included), after the
    # scheme and authority.
    rest = url_path_and_query(value)
    return rest if rest.startswith("/") else "/" + rest


def compile_matcher(value: str) -> str | Pattern | None:
    """How to match ``value``: its normalised prefix when it is plain, else a :class:`Pattern`.

    Values that start with neither ``/`` nor ``*`` never match (SPEC 4):
    ``None``. The caller still keeps such a rule, so ``explain`` can show it.
    """
    first = value[:1]
    if first == "/":
        if "*" not in value and value[-1] != "$":
            return normalize(value)
    elif first != "*":
        return None
    return Pattern(value)


# A value of one ``*`` at most and maybe a final ``$``, starting with ``/``,
# found in text of one value a line (each led by "\n"); any other line gives
# empty groups. Group 1 takes every character it can, so a line that fails
# is given up in one pass.
_SIMPLE_VALUE = re.compile(r"\n(?:(/[^*$\n]*)(?:(\*)([^*$\n]*))?(\$?)(?![^\n])|[^\n]*)")


def simple_values(values: list[str]) -> tuple[list[str], list[str], list[str], list[str]]:
    """Columns of (prefix, star, piece, anchor), normalised; empty strings for other values.

    What a file of many rules with ``%`` escapes or non-ASCII needs, read in
    bulk: values of one ``*`` at most and maybe a final ``$``, starting with
    ``/``, are cut by one regex and percent-normalised all at once
    (:func:`.normalize_all`), with no Python call per rule. Other values (an
    empty prefix) are for :func:`compile_matcher`, one by one.
    """
    cut: list[tuple[str, str, str, str]] = _SIMPLE_VALUE.findall("\n" + "\n".join(values))
    if len(cut) != len(values) or not cut:  # never so: each value is one line
        empty = [""] * len(values)
        return empty, empty, empty, empty
    heads, stars, pieces, anchors = zip(*cut, strict=True)
    return normalize_all(heads), list(stars), normalize_all(pieces), list(anchors)
