"""Regular expressions with possessive quantifiers, on every supported Python.

The readers' patterns repeat possessively (``*+``, ``++``, ``?+``): a value
that is no rule, or a tag of a million attributes, fails or ends in one pass,
with nothing kept to go back to. That is what holds reading to time linear in
the input and memory independent of it (SPEC 1, a file is read whole however
it is written; page-level directives likewise). A greedy repeat matches the
same text here, but a line it does not match can cost quadratic time, and a
long tag memory in proportion to its length.

``re`` reads possessive repeats from Python 3.11. On Python 3.10 the
``regex`` package, which reads the same syntax and gives the same matches
(its default, version 0, behaves as ``re``), compiles them instead; the
package requires it there and nowhere else.
"""

from __future__ import annotations

import re
import sys
from importlib import import_module
from typing import AnyStr, cast

__all__ = ["compile_possessive"]

if sys.version_info >= (3, 11):
    _compile = re.compile
else:  # pragma: no cover - run by CI's Python 3.10 environment
    _compile = import_module("regex").compile


def compile_possessive(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, possessive repeats read on Python 3.10 too.

    ``flags`` are ``re``'s (``re.IGNORECASE``, ...); ``regex`` gives its flags
    the same values. The object answers ``match``, ``search``, ``split``,
    ``finditer`` and the rest as ``re``'s does.
    """
    return cast("re.Pattern[AnyStr]", _compile(pattern, flags))
