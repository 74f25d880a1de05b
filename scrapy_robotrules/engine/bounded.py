"""Untrusted values read and shown within bounds: JSON depth and digits, a repr cut short.

A setting given as JSON text (``-s 'ROBOTRULES_POLICIES={...}'``) is read
with its nesting depth counted first, since Python's parser recurses once
per level (``[[[[...`` raises RecursionError), and with each whole number's
digits bounded (a number of 400 digits parses, then breaks every ``float()``
and every ``repr`` past 4,300 digits). Values shown in error messages are
cut short, never a megabyte line, and never an exception of their own.

SPEC: none (how settings are read, not what is decided).
"""

from __future__ import annotations

import json
import math
import re

__all__ = ["TooLarge", "loads", "shown"]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')
"""A JSON string (skipped whole) or a bracket: what the depth of a document is counted on."""


class TooLarge(ValueError):
    """JSON text nests too deep or holds too long a number; the message says which."""


def _too_deep(text: str, max_depth: int) -> bool:
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                return True
        elif token in ("]", "}"):
            depth -= 1
    return False


def loads(text: str | bytes, *, max_depth: int, max_digits: int) -> object:
    """``json.loads(text)``; :class:`TooLarge` past the bounds, ``ValueError`` for no JSON."""
    scanned = text.decode("latin-1") if isinstance(text, bytes) else text
    if _too_deep(scanned, max_depth):
        raise TooLarge(f"nests deeper than {max_depth} levels")

    def whole_number(digits: str) -> int:
        if len(digits.lstrip("-")) > max_digits:
            raise TooLarge(
                f"has a number of {len(digits.lstrip('-'))} digits (at most {max_digits})"
            )
        return int(digits)

    return json.loads(text, parse_int=whole_number)


def shown(value: object, limit: int) -> str:
    """``repr(value)`` in at most about ``limit`` characters, whatever ``value`` is."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"a whole number of about {int(value.bit_length() * math.log10(2))} digits"
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deep; past str()'s digit limit
        return f"a {type(value).__name__} nested too deep"
    return text if len(text) <= limit else f"{text[: limit - 5]}...{text[-2:]}"
