"""The tags of an HTML page that page-level rules read, found by a small tolerant scanner.

No SPEC section (page-level rules are outside it).

Two questions: the ``<meta name content>`` tags of the head (robots rules,
TDMRep), and the ``<a>``/``<area>`` links with ``rel="nofollow"``. Robots
meta tags belong in the ``<head>``, so for them only the head is read: up to
``</head>`` or the ``<body>`` tag. Either way never more than ``limit``
bytes, so a 10 MB page costs no more than its first bytes.

No parser, no tree: one pass over the text in which every character is
looked at a bounded number of times, whatever the markup (unclosed quotes,
comments or scripts end the scan rather than restart it), holding nothing
per tag or attribute passed: no pattern repeats a group (a regular
expression engine keeps state for each turn of a repeated group, tens of
bytes per byte of a tag of a million attributes); a tag is walked one quoted
value at a time and its attributes one at a time, keeping only the few
asked for. Comments and
the contents of ``<script>``, ``<style>``, ``<template>``, ``<textarea>``
and ``<title>`` are skipped, so a tag written inside them is not read, as a
browser would not read it.

The text is decoded with the encoding given when it is one a browser could
read (:func:`text_encoding`), else as UTF-8: a label naming a codec that is
no text encoding (``hex``, ``base64``, ``rot13``, ``zlib``, ``idna``,
``undefined``) is ignored, as browsers ignore a label they do not know.
"""

from __future__ import annotations

import codecs
import html
import re
from collections.abc import Iterator

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

_OPENING = re.compile(r"<[A-Za-z/!]")
_TAG_NAME = re.compile(r"<(/?)([A-Za-z][^\s/>]*)")
"""A start or end tag's name."""
_TAG_STOP = re.compile(r""">|=\s*(?:"[^"]*"?|'[^']*'?)""")
"""What ends a tag (``>``) or is passed whole on the way (a quoted value: a quote opens
one only after ``=``, and an unclosed one runs to the end of the text)."""
_ATTRIBUTE = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*("[^"]*"?|'[^']*'?|[^\s>]*))?""")
"""An attribute's name and, if it has one, its value (quotes kept)."""
_RAW_TEXT = ("script", "style", "template", "textarea", "title")
_END_OF_HEAD = ("body", "frameset")


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


def _unquoted(value: str | None) -> str:
    value = value or ""
    if value[:1] in ("'", '"'):
        value = value[1:-1] if len(value) > 1 and value[-1] == value[0] else value[1:]
    return html.unescape(value)


def _attributes(text: str, names: tuple[str, ...]) -> dict[str, str]:
    """The attributes of ``names`` in a tag's attribute text (values unescaped); the first counts.

    One match per attribute, each let go before the next: whatever the
    number of attributes, nothing is kept of those passed.
    """
    found: dict[str, str] = {}
    position = 0
    while len(found) < len(names):
        attribute = _ATTRIBUTE.search(text, position)
        if attribute is None:
            break
        position = attribute.end()
        name = attribute[1].lower()
        if name in names and name not in found:
            found[name] = _unquoted(attribute[2])
    return found


def _tag_end(text: str, position: int) -> tuple[int, int]:
    """Where the attribute text that starts at ``position`` ends, and where the tag does.

    One search per quoted value and one more: a quoted value may hold ``>``.
    """
    while True:
        stop = _TAG_STOP.search(text, position)
        if stop is None:
            return len(text), len(text)
        if stop[0] == ">":
            return stop.start(), stop.end()
        position = stop.end()


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
    metas: list[tuple[str, str]] = []
    for name, attributes in _start_tags(_text(body, encoding, limit), head_only=True):
        if name == "meta":
            found = _attributes(attributes, ("name", "content"))
            if len(found) == 2:
                metas.append((found["name"], found["content"]))
                if max_tags is not None and len(metas) >= max_tags:
                    break
    return metas


def nofollow_links(
    body: bytes | str, encoding: str = "utf-8", limit: int = DEFAULT_LIMIT
) -> list[str]:
    """The ``href`` (as written, unescaped) of each ``<a>``/``<area>`` with ``rel`` nofollow.

    The whole text is read, within ``limit`` bytes, and at most
    :data:`MAX_LINKS` links are returned.
    """
    links: list[str] = []
    for name, attributes in _start_tags(_text(body, encoding, limit), head_only=False):
        if name in ("a", "area"):
            found = _attributes(attributes, ("href", "rel"))
            if len(found) == 2 and "nofollow" in found["rel"].lower().split():
                links.append(found["href"])
                if len(links) >= MAX_LINKS:
                    break
    return links


def _start_tags(text: str, *, head_only: bool) -> Iterator[tuple[str, str]]:
    """Each start tag's name (lower-case) and attribute text, in document order."""
    position = 0
    while True:
        opening = _OPENING.search(text, position)
        if opening is None:
            return
        start = opening.start()
        if text.startswith("<!--", start):
            end = text.find("-->", start + 4)
            if end < 0:
                return
            position = end + 3
            continue
        tag = _TAG_NAME.match(text, start)
        if tag is None:
            position = start + 1
            continue
        attributes_end, position = _tag_end(text, tag.end())
        closing, name = tag[1], tag[2].lower()
        if head_only and ((closing and name == "head") or (not closing and name in _END_OF_HEAD)):
            return
        if closing:
            continue
        yield name, text[tag.end() : attributes_end]
        if name in _RAW_TEXT:
            end_tag = re.compile(f"</{name}", re.IGNORECASE).search(text, position)
            if end_tag is None:
                return
            position = end_tag.end()
