"""Untrusted values read and shown within bounds: JSON depth and digits, a repr cut short.

A setting given as JSON text (``-s 'ROBOTRULES_POLICIES={...}'``) is read
with its nesting depth counted first, since Python's parser recurses once
per level (``[[[[...`` raises RecursionError), and with each whole number's
digits bounded (a number of 400 digits parses, then breaks every ``float()``
and every ``repr`` past 4,300 digits). Values shown in error messages are
cut short, never a megabyte line, and never an exception of their own.
A setting that is a table of entries (a dict, or a JSON object) is read as
one and bounded in entries by :func:`setting_mapping`, before its entries
are checked one by one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["TooLarge", "loads", "setting_mapping", "shown"]

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


def setting_mapping(
    value: object,
    *,
    setting: str,
    error: type[ValueError],
    expected: str,
    expected_in_full: str,
    entries: str,
    max_entries: int,
    max_depth: int,
    max_digits: int,
    limit: int,
) -> Mapping[Any, Any]:
    """The table a setting holds: a mapping, a JSON object (``-s``), or none (``{}``).

    Raises ``error`` with the ``setting`` named when the value is JSON past
    the bounds, no JSON, no mapping (``expected``: what it must be; the JSON
    bounds' message says ``expected_in_full``), or more than ``max_entries``
    ``entries``. Values shown are cut to about ``limit`` characters.
    """
    if value is None or value == "":
        return {}
    if isinstance(value, (str, bytes)):
        try:
            value = loads(value, max_depth=max_depth, max_digits=max_digits)
        except TooLarge as exc:
            raise error(f"{setting} {exc}: {expected_in_full}") from None
        except ValueError:
            raise error(
                f"{setting} must be a dict or a JSON object, not {shown(value, limit)}"
            ) from None
    if not isinstance(value, Mapping):
        raise error(f"{setting} must be {expected}, not {shown(value, limit)}")
    if len(value) > max_entries:
        raise error(f"{setting} has {len(value)} {entries}; at most {max_entries}")
    return value
