"""Structured-field dictionaries (RFC 9651 §3.2, parsed as §4.2.2 says): ``Content-Usage`` syntax.

draft-ietf-aipref-vocab §4 names this syntax. Hostile values cost little:
at most :data:`MAX_VALUE_CHARS` characters and :data:`MAX_MEMBERS`
members are read, and an invalid value is a ``ValueError`` saying why,
never another exception.
"""

from __future__ import annotations

import re

__all__ = ["MAX_MEMBERS", "MAX_VALUE_CHARS", "Token", "parse_dictionary"]

MAX_VALUE_CHARS = 4096
"""Characters of one value read; a longer one is not parsed (its preferences are unknown)."""
MAX_MEMBERS = 64
"""Dictionary members (or Content-Signal pairs) read of one value."""


class Token(str):
    """An sf-token (RFC 9651 §3.3.4), told apart from an sf-string."""


class _Invalid(Exception):
    pass


_KEY = re.compile(r"[a-z*][a-z0-9_.*-]*")
_TOKEN = re.compile(r"[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*")
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_BYTES = re.compile(r":([A-Za-z0-9+/=]*):")
_OWS = " \t"


class _Parser:
    __slots__ = ("pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def skip(self, chars: str) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def key(self) -> str:
        match = _KEY.match(self.text, self.pos)
        if match is None:
            raise _Invalid("a key must start with a-z or *")
        self.pos = match.end()
        return match.group()

    def bare_item(self) -> object:
        text, pos = self.text, self.pos
        first = text[pos : pos + 1]
        if first == '"':
            return self.string()
        if first == "?":
            if text[pos + 1 : pos + 2] in ("0", "1"):
                self.pos += 2
                return text[pos + 1] == "1"
            raise _Invalid("a boolean is ?0 or ?1")
        if first == ":":
            match = _BYTES.match(text, pos)
            if match is None:
                raise _Invalid("an unterminated byte sequence")
            self.pos = match.end()
            return match.group(1)
        if first == "@":
            self.pos += 1
            number = self.number()
            if not isinstance(number, int):
                raise _Invalid("a date is an integer")
            return number
        if first == "%":
            return self.display_string()
        if first == "-" or first.isdigit():
            return self.number()
        match = _TOKEN.match(text, pos)
        if match is None:
            raise _Invalid(f"no item at {first!r}")
        self.pos = match.end()
        return Token(match.group())

    def number(self) -> int | float:
        match = _NUMBER.match(self.text, self.pos)
        if match is None:
            raise _Invalid("a number expected")
        raw = match.group()
        whole, _, fraction = raw.lstrip("-").partition(".")
        if (fraction and (len(whole) > 12 or len(fraction) > 3)) or len(whole) > 15:
            raise _Invalid("a number too long")
        self.pos = match.end()
        return float(raw) if fraction else int(raw)

    def string(self) -> str:
        text = self.text
        self.pos += 1
        out: list[str] = []
        while self.pos < len(text):
            char = text[self.pos]
            self.pos += 1
            if char == "\\":
                escaped = text[self.pos : self.pos + 1]
                if escaped not in ('"', "\\"):
                    raise _Invalid("a bad escape in a string")
                out.append(escaped)
                self.pos += 1
            elif char == '"':
                return "".join(out)
            elif not " " <= char <= "~":
                raise _Invalid("a string holds printable ASCII only")
            else:
                out.append(char)
        raise _Invalid("an unterminated string")

    def display_string(self) -> str:
        if self.text[self.pos : self.pos + 2] != '%"':
            raise _Invalid('a display string starts with %"')
        self.pos += 1
        return self.string()  # percent-escapes kept as written: only y/n tokens matter here

    def parameters(self) -> None:
        while self.peek() == ";":
            self.pos += 1
            self.skip(" ")
            self.key()
            if self.peek() == "=":
                self.pos += 1
                self.bare_item()

    def member(self) -> object:
        if self.peek() == "(":
            self.pos += 1
            while True:
                self.skip(" ")
                if self.peek() == ")":
                    self.pos += 1
                    break
                self.bare_item()
                self.parameters()
                if self.peek() not in (" ", ")"):
                    raise _Invalid("an inner list is not closed")
            self.parameters()
            return None  # an inner list: never a y/n token
        item = self.bare_item()
        self.parameters()
        return item


def parse_dictionary(value: str) -> dict[str, object]:
    """An sf-dictionary's members (parameters dropped); ``ValueError`` saying why it is none.

    RFC 9651 §4.2.2: a repeated key keeps its last value; a key with no
    ``=`` is ``True``.
    """
    if len(value) > MAX_VALUE_CHARS:
        raise ValueError(f"longer than {MAX_VALUE_CHARS} characters")
    if not value.isascii():
        raise ValueError("not ASCII")
    parser = _Parser(value.strip(" "))
    members: dict[str, object] = {}
    try:
        while parser.pos < len(parser.text):
            key = parser.key()
            if parser.peek() == "=":
                parser.pos += 1
                members[key] = parser.member()
            else:
                members[key] = True
                parser.parameters()
            members[key] = members.pop(key)  # a repeated key moves to the end
            if len(members) > MAX_MEMBERS:
                raise _Invalid(f"more than {MAX_MEMBERS} members")
            parser.skip(_OWS)
            if parser.pos >= len(parser.text):
                break
            if parser.peek() != ",":
                raise _Invalid(f"a comma expected at {parser.peek()!r}")
            parser.pos += 1
            parser.skip(_OWS)
            if parser.pos >= len(parser.text):
                raise _Invalid("a trailing comma")
    except _Invalid as exc:
        raise ValueError(str(exc)) from None
    return members
