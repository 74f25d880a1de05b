"""The ``<meta name content>`` tags of an HTML page's head, read by a small tolerant scanner.

No SPEC section (page-level rules are outside it).

Robots meta tags belong in the ``<head>``, so only the head is read: up to
``</head>`` or the ``<body>`` tag, and never more than ``limit`` bytes, so a
10 MB page costs no more than its first bytes. No parser, no tree: one
pass over the text in which every character is looked at a bounded number
of times, whatever the markup (unclosed quotes, comments or scripts end
the scan rather than restart it). Comments and the contents of
``<script>``, ``<style>``, ``<template>``, ``<textarea>`` and ``<title>`` are
skipped, so a meta tag written inside them is not read, as a browser would
not read it.
"""

from __future__ import annotations

import codecs
import html
import re

__all__ = ["DEFAULT_LIMIT", "MAX_TAGS", "head_metas"]

DEFAULT_LIMIT = 262_144
"""Bytes of a page read for its meta tags: 256 KiB, room for a head with inline CSS."""
MAX_TAGS = 256
"""Meta tags returned at most."""

_TAG = re.compile(r"""<(/?)([A-Za-z][^\s/>]*)((?:[^>=]+|=\s*"[^"]*"?|=\s*'[^']*'?|=)*)>?""")
"""A start or end tag. A quote opens a value only after ``=``; an unclosed one runs
to the end of the text. The match cannot fail, so it never backtracks."""
_OPENING = re.compile(r"<[A-Za-z/!]")
_ATTRIBUTE = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*("[^"]*"?|'[^']*'?|[^\s>]*))?""")
_RAW_TEXT = ("script", "style", "template", "textarea", "title")
_END_OF_HEAD = ("body", "frameset")


def _decode(body: bytes | str, encoding: str, limit: int) -> str:
    if isinstance(body, str):
        return body[:limit]
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "utf-8"
    return body[:limit].decode(encoding, "replace")


def _attributes(text: str) -> dict[str, str]:
    """Attribute names (lower-case) and values (unescaped); the first of a name counts."""
    found: dict[str, str] = {}
    for match in _ATTRIBUTE.finditer(text):
        value = match[2] or ""
        if value[:1] in ("'", '"'):
            value = value[1:-1] if len(value) > 1 and value[-1] == value[0] else value[1:]
        found.setdefault(match[1].lower(), html.unescape(value))
    return found


def head_metas(
    body: bytes | str, encoding: str = "utf-8", limit: int = DEFAULT_LIMIT
) -> list[tuple[str, str]]:
    """``(name, content)`` of each meta tag in the head that has both, in document order.

    The crawl layer reads each response's head once for both of its
    middlewares (``crawl.htmlhead``).
    """
    return _scan(_decode(body, encoding, limit))


def _scan(text: str) -> list[tuple[str, str]]:
    metas: list[tuple[str, str]] = []
    position = 0
    while len(metas) < MAX_TAGS:
        opening = _OPENING.search(text, position)
        if opening is None:
            break
        start = opening.start()
        if text.startswith("<!--", start):
            end = text.find("-->", start + 4)
            if end < 0:
                break
            position = end + 3
            continue
        tag = _TAG.match(text, start)
        if tag is None:
            position = start + 1
            continue
        position = tag.end()
        closing, name = tag[1], tag[2].lower()
        if (closing and name == "head") or (not closing and name in _END_OF_HEAD):
            break
        if closing:
            continue
        if name == "meta":
            attributes = _attributes(tag[3])
            if "name" in attributes and "content" in attributes:
                metas.append((attributes["name"], attributes["content"]))
        elif name in _RAW_TEXT:
            end_tag = re.compile(f"</{name}", re.IGNORECASE).search(text, position)
            if end_tag is None:
                break
            position = end_tag.end()
    return metas
