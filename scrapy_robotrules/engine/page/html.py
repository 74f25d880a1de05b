"""The tags of an HTML page that page-level rules read, as lxml's HTML parser reads them.

No SPEC section (page-level rules are outside it).

Two questions: the ``<meta name content>`` tags of the head (robots rules,
TDMRep), and the ``<a>``/``<area>`` links with ``rel="nofollow"``. Either
way never more than ``limit`` bytes are read, so a 10 MB page costs no more
than its first bytes.

The parser is libxml2's, as lxml brings it (version 2.14 or later, which
reads tags as the HTML standard does), through lxml's parser target: it
hands over each tag and its attributes and builds no tree. The text is fed
to it a block at a time, and it is stopped once the answer is complete
(the end of the head, the last link kept), so what lies past that is never
parsed. Comments and the contents of ``<script>``, ``<style>``,
``<title>`` and ``<textarea>`` are text to the parser, not tags; the
contents of ``<template>`` are passed over too, as a browser shows none of
them until a script does.

Robots meta tags belong in the head, so for them only the head is read,
and the head ends where the parser ends it: at ``</head>``, ``<body>``,
``<frameset>``, or the first text or element that has no place in a head
(a word, an ``<img>``, a ``<div>``), as a browser's head ends there. A tag
the text stops in the middle of (cut by ``limit``, or at the end of the
page) is not read: the parser drops it, as a browser drops an unfinished
tag at the end of a file.

Memory: the parser holds the attributes of the tag it is reading until
that tag ends, and lxml hands them over in a dictionary, so a tag of a
million attributes costs some twenty bytes a byte while it is read; of the
tags passed, nothing is kept.

The text is decoded with the encoding given when it is one a browser could
read (:func:`text_encoding`), else as UTF-8: a label naming a codec that is
no text encoding (``hex``, ``base64``, ``rot13``, ``zlib``, ``idna``,
``undefined``) is ignored, as browsers ignore a label they do not know.
"""

from __future__ import annotations

import codecs
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from lxml import etree

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LINKS",
    "MAX_TAGS",
    "decode_html",
    "head_metas",
    "nofollow_links",
    "text_encoding",
]

DEFAULT_LIMIT = 262_144
"""Bytes of a page read for its meta tags: 256 KiB, room for a head with inline CSS."""
MAX_TAGS = 256
"""Meta tags returned at most, unless the caller asks for every one within its limit."""
MAX_LINKS = 65_536
"""``rel="nofollow"`` links returned at most (past them, the page is read no further)."""

_FED = 4096
"""Characters of text given to the parser at a time (the parser stops within the block)."""
_END_OF_HEAD = frozenset({"body", "frameset"})


def text_encoding(name: str | None) -> str | None:
    """``name``'s codec, if it decodes HTML as a browser could (an ASCII-compatible text encoding).

    Every encoding of the WHATWG Encoding Standard is ASCII-compatible but
    UTF-16, which is kept too; Python's codecs that turn bytes into bytes
    (``hex``, ``base64``, ``zlib``) or text into text (``rot13``), and
    ``idna``, ``punycode`` and ``undefined``, are not encodings of pages.
    """
    if not name:
        return None
    try:
        codec = codecs.lookup(name)
    except LookupError:
        return None
    if not getattr(codec, "_is_text_encoding", True):
        return None
    if codec.name.startswith(("utf-16", "utf-32")):
        return codec.name
    try:
        ascii_compatible = b"<meta a='b'>".decode(codec.name, "replace") == "<meta a='b'>"
    except (LookupError, UnicodeError, ValueError):
        return None
    return codec.name if ascii_compatible else None


def decode_html(body: bytes, encoding: str) -> str:
    """``body`` as text in ``encoding`` if that is one pages are written in, else in UTF-8."""
    return body.decode(text_encoding(encoding) or "utf-8", "replace")


def _text(body: bytes | str, encoding: str, limit: int) -> str:
    return body[:limit] if isinstance(body, str) else decode_html(body[:limit], encoding)


def head_metas(
    body: bytes | str,
    encoding: str = "utf-8",
    limit: int = DEFAULT_LIMIT,
    max_tags: int | None = MAX_TAGS,
) -> list[tuple[str, str]]:
    """``(name, content)`` of each meta tag in the head that has both, in document order.

    At most ``max_tags`` of them; ``None``: every one within ``limit``
    bytes (what they hold is then bounded by those bytes). The crawl layer
    reads each response's head once for both of its middlewares
    (``crawl.pages.head``), every meta tag of it, so that no robots meta tag
    is lost among others.
    """
    most = sys.maxsize if max_tags is None else max_tags
    return _read(_text(body, encoding, limit), _HEAD_METAS, most)


def nofollow_links(
    body: bytes | str, encoding: str = "utf-8", limit: int = DEFAULT_LIMIT
) -> list[str]:
    """The ``href`` (as written, unescaped) of each ``<a>``/``<area>`` with ``rel`` nofollow.

    The whole text is read, within ``limit`` bytes, and at most
    :data:`MAX_LINKS` links are returned.
    """
    return [href for href, _ in _read(_text(body, encoding, limit), _NOFOLLOW_LINKS, MAX_LINKS)]


class _Question(NamedTuple):
    """The start tags asked for, the two attributes read of them, and which pairs count."""

    tags: frozenset[str]
    attributes: tuple[str, str]
    head_only: bool
    counts: Callable[[str, str], bool] = lambda first, second: True


def _nofollow(href: str, rel: str) -> bool:
    return "nofollow" in rel.lower().split()


_HEAD_METAS = _Question(frozenset({"meta"}), ("name", "content"), head_only=True)
_NOFOLLOW_LINKS = _Question(frozenset({"a", "area"}), ("href", "rel"), False, _nofollow)


class _Complete(Exception):
    """Raised from the parser's target to stop the parser: the answer is complete."""


class _StartTags:
    """lxml's parser target: the pairs a question asks for, in document order, outside templates.

    It raises :class:`_Complete` where the answer is complete: at the end
    of the head for a question of the head, at the ``most``-th pair.
    """

    def __init__(self) -> None:
        self.ask(_HEAD_METAS, 0)

    def ask(self, question: _Question, most: int) -> None:
        self.question = question
        self.most = most
        self.found: list[tuple[str, str]] = []
        self._templates = 0

    def start(self, tag: str, attributes: Mapping[str, str]) -> None:
        question = self.question
        if tag == "template":
            self._templates += 1
        elif self._templates:
            return
        elif tag in question.tags:
            first, second = (attributes.get(name) for name in question.attributes)
            if first is not None and second is not None and question.counts(first, second):
                self.found.append((first, second))
                if len(self.found) >= self.most:
                    raise _Complete
        elif question.head_only and tag in _END_OF_HEAD:
            raise _Complete

    def end(self, tag: str) -> None:
        if tag == "template":
            self._templates = max(self._templates - 1, 0)
        elif tag == "head" and self.question.head_only and not self._templates:
            raise _Complete

    def close(self) -> None:
        return None


_THREAD = threading.local()


def _reader() -> tuple[etree.HTMLParser, _StartTags]:
    """This thread's parser and its target: a parser costs more to make than a short head to read.

    A parser is ready for the next text once it is closed or its target
    has stopped it. lxml is imported here, on the first page read: the
    engine's other users (``RobotsTxt``, the ``robotrules`` command) never
    load it.
    """
    reader: tuple[etree.HTMLParser, _StartTags] | None = getattr(_THREAD, "reader", None)
    if reader is None:
        from lxml import etree

        if etree.LIBXML_VERSION < (2, 14):  # pragma: no cover (lxml 6's wheels bring 2.14)
            raise ImportError(
                "scrapy-robotrules reads HTML with libxml2 2.14 or later; this lxml runs"
                f" libxml2 {'.'.join(map(str, etree.LIBXML_VERSION))}, whose HTML parser"
                " takes time quadratic in the attributes of a tag"
            )
        target = _StartTags()
        reader = _THREAD.reader = (etree.HTMLParser(target=target, encoding="utf-8"), target)
    return reader


def _read(text: str, question: _Question, most: int) -> list[tuple[str, str]]:
    """The pairs ``question`` asks for in ``text``, the first ``most`` of them."""
    parser, target = _reader()
    target.ask(question, most)
    if not text:
        return []
    try:
        for start in range(0, len(text), _FED):
            parser.feed(text[start : start + _FED].encode("utf-8", "replace"))
        parser.close()
    except _Complete:
        pass
    except BaseException:
        del _THREAD.reader  # stopped in the middle of a text: the next call makes another parser
        raise
    return target.found
