"""Reading a robots.txt file: bytes, the line grammar, and the split into groups (SPEC 1, 2).

All leniency lives here, named in one place: the accepted misspellings, the
``key value`` form without a colon, the 500 KiB limit (SPEC 1).

Parsing is shaped for speed: a broad crawl parses a file per site and asks
most files a handful of questions. No line is walked in Python: regexes led by
``\n`` find the lines, and a group's member lines stay bytes until a crawler
first asks for that group.
"""

from __future__ import annotations

import re
from array import array
from typing import NamedTuple

from scrapy_robotrules.engine.possessive import compile_possessive
from scrapy_robotrules.engine.robots.urls import RESERVED, UNRESERVED

__all__ = [
    "BLANKS",
    "DEFAULT_MAX_SIZE",
    "KEY_NAMES",
    "KNOWN_LINES",
    "MEMBER_FIELDS",
    "FileLayout",
    "RawGroup",
    "count_unknown",
    "decode_value",
    "extra_items",
    "line_starts",
    "member_columns",
    "member_line",
    "read_bytes",
    "read_layout",
]

DEFAULT_MAX_SIZE = 512_000
_BOM = b"\xef\xbb\xbf"

# Every accepted spelling of every key, by canonical name.
_SPELLINGS: dict[str, tuple[str, ...]] = {
    "user-agent": ("user-agent", "useragent", "user agent"),
    "allow": ("allow",),
    "disallow": ("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"),
    "crawl-delay": ("crawl-delay", "crawl delay"),
    "request-rate": ("request-rate", "request rate"),
    "visit-time": ("visit-time", "visit time"),
    "sitemap": ("sitemap", "site-map", "sitemaps"),
    "host": ("host",),
}
KEY_NAMES: dict[str, str] = {
    spelling: name for name, spellings in _SPELLINGS.items() for spelling in spellings
}
_MEMBERS = ("allow", "disallow", "crawl-delay", "request-rate", "visit-time")

# Around keys and values: ASCII blanks, never a line break (SPEC 1).
_WS = rb"[ \t\v\f]"


def _trie(words: list[bytes]) -> bytes:
    """An alternation of ``words`` factored by common prefix.

    The regex engine tries alternatives one by one; factored, a line is
    turned away after a character or two instead of once per spelling.
    """
    if words == [b""]:
        return b""
    heads: dict[bytes, list[bytes]] = {}
    for word in words:
        heads.setdefault(word[:1], []).append(word[1:])
    branches = [re.escape(head) + _trie(tails) for head, tails in sorted(heads.items()) if head]
    optional = b"" in heads
    if len(branches) == 1 and not optional:
        return branches[0]
    return b"(?:" + b"|".join(branches) + (b")?" if optional else b")")


def _line(names: tuple[str, ...], *, groups: bool = True) -> bytes:
    """The pattern of one line whose key is one of ``names`` (after its ``\\n``).

    ``key: value`` (the key is all before the first colon) or exactly two
    words with no colon anywhere: ``key value``. Group 1 is the key, group 2
    (colon) or 3 (two words) the value, trailing blanks still on it; none
    without ``groups``.
    """
    group = b"(" if groups else b"(?:"
    spellings = [s.encode() for n in names for s in _SPELLINGS[n]]
    firsts = sorted({s[:1] for s in spellings})
    # A spelled-out space makes three words of the colon-less form.
    two_words = b"".join(
        b"(?i:(?<!" + re.escape(b" " + s.split(b" ", 1)[1]) + b"))" for s in spellings if b" " in s
    )
    # Case is ignored in the key only: a pattern-wide IGNORECASE would fold
    # every character of every value the engine looks at, several times over.
    return (
        b"(?=" + _WS + b"*(?i:[" + b"".join(firsts) + b"]))" + _WS + b"*" + group + b"(?i:"
        + _trie(spellings) + b"))"
        + b"(?:" + _WS + b"*:" + _WS + b"*" + group + b"[^#\n]*)"
        + b"|" + two_words + _WS + b"+" + group + b"[^ \t\v\f\n#:]+)" + _WS + b"*(?![^#\n]))"
    )  # fmt: skip


def _lines(names: tuple[str, ...]) -> re.Pattern[bytes]:
    """Lines whose key is one of ``names``, each found with the ``\\n`` before it.

    Patterns led by a literal ``\\n`` let the regex engine skip from line to
    line in C; the text searched starts with an added ``\\n``.
    """
    return re.compile(b"\n(?:" + _line(names) + b")")


_MEMBER_LINES = _lines(_MEMBERS)
_LINE_BREAK = re.compile(b"\n")
# The member lines that are no rule, read apart from the rules (see .groups).
_EXTRA_LINES = _lines(("crawl-delay", "request-rate", "visit-time"))
# The lines that end a group's run of User-agent lines (SPEC 2).
_RULE_LINES = _lines(("allow", "disallow"))
# A line with content and no known key, matched as its "\n" alone: one pass.
_UNKNOWN_LINES = re.compile(
    b"\n(?=" + _WS + b"*[^ \t\v\f\n#])(?!" + _line(tuple(_SPELLINGS), groups=False) + b")"
)
# Every line whose key is known, read as the patterns above read it (see .lint).
KNOWN_LINES = _lines(tuple(_SPELLINGS))
# File structure in one scan: User-agent lines, file-wide Sitemap and Host lines.
_OUTLINE_LINES = _lines(("user-agent", "sitemap", "host"))
BLANKS = " \t\v\f"
_RULE_INITIALS = (b"a", b"A", b"d", b"D")


class RawGroup(NamedTuple):
    """A group as read: its agents (value, line) and its member text."""

    agents: tuple[tuple[str, int], ...]
    body: bytes
    body_line: int


class FileLayout(NamedTuple):
    """What one scan of a file finds: its groups in columns, not one object per group.

    Group ``i`` has the member text ``bodies[i]``, whose first line is
    ``body_lines[i]``, and the ``User-agent`` lines ``agent_ends[i - 1]`` (0
    for the first group) to ``agent_ends[i]`` of ``agent_values`` and
    ``agent_lines``. A file has a few groups and a crawler asks about one
    or two: :class:`RawGroup` is made only for those (:func:`raw_group`).
    """

    bodies: list[bytes]
    body_lines: list[int]
    agent_values: list[str]
    agent_lines: list[int]
    agent_ends: list[int]
    sitemaps: list[str]
    host: str | None
    unknown_lines: int
    """Lines with content and no known key, outside the groups' member text."""


def read_bytes(content: bytes | str, max_size: int = DEFAULT_MAX_SIZE) -> tuple[bytes, bool]:
    """The bytes to parse, with line breaks made ``\\n``, and whether the limit cut them.

    A leading BOM is dropped. Only ``max_size`` bytes after it are read, and
    a line cut by the limit is dropped (SPEC 1, RFC 9309 §2.5).
    """
    if isinstance(content, str):
        if content.startswith("\ufeff"):
            content = content[1:]
        try:
            data = content.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            data = content.encode("utf-8", "surrogatepass")
    else:
        data = bytes(content)
        if data.startswith(_BOM):
            data = data[len(_BOM) :]
    truncated = len(data) > max_size
    if truncated:
        if data[max_size : max_size + 1] in (b"\r", b"\n"):
            data = data[:max_size]
        else:
            cut = max(data.rfind(b"\n", 0, max_size), data.rfind(b"\r", 0, max_size))
            data = data[: cut + 1]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return data, truncated


def decode_value(value: bytes) -> str:
    """Decode a value; bytes that are not UTF-8 survive as surrogate escapes."""
    return value.decode("utf-8", "surrogateescape").rstrip(BLANKS)


def _key_value(match: re.Match[bytes]) -> tuple[bytes, bytes]:
    return match[1], match[3] if match[2] is None else match[2]


def count_unknown(buf: bytes, start: int = 0, end: int | None = None) -> int:
    """Lines of ``buf`` (each led by ``\\n``) with content and no key this parser knows."""
    return len(_UNKNOWN_LINES.findall(buf, start, len(buf) if end is None else end))


def read_layout(data: bytes) -> FileLayout:
    """Groups, sitemaps and host of ``data`` (as given by :func:`read_bytes`)."""
    buf = b"\n" + data
    end = len(buf) - 1  # the final newline ends the last line; it leads none
    agent_lines: list[re.Match[bytes]] = []
    sitemaps: dict[str, None] = {}  # ordered, without duplicates
    host: str | None = None
    for item in _OUTLINE_LINES.finditer(buf, 0, end):
        first = item[1][:1]
        # Tuples, not b"uU": "bytes in bytes" first tries the operand as an
        # int, and raising and clearing that TypeError costs more than the test.
        if first in (b"u", b"U"):
            agent_lines.append(item)
            continue
        value = decode_value(_key_value(item)[1])
        if not value:
            continue
        if first in (b"h", b"H"):
            if host is None:
                host = value
        else:
            sitemaps[value] = None
    bodies: list[bytes] = []
    body_lines: list[int] = []
    agent_values: list[str] = []
    agent_numbers: list[int] = []
    agent_ends: list[int] = []
    seen: dict[bytes, bytes] = {}
    unknown = count_unknown(buf, 0, agent_lines[0].start() if agent_lines else end)
    line = 0
    counted = 0
    body_start = -1  # where the current group's member text starts, once found
    body_line = 0
    for i, agent in enumerate(agent_lines):
        start = agent.start()
        line += buf.count(b"\n", counted, start + 1)
        counted = start + 1
        raw = agent[2]
        agent_values.append(decode_value(agent[3] if raw is None else raw))
        agent_numbers.append(line)
        after = buf.index(b"\n", agent.end())
        gap_end = agent_lines[i + 1].start() if i + 1 < len(agent_lines) else end
        if after == gap_end < end:
            # The next User-agent line follows at once: nothing between to read.
            continue
        rule_from = after
        if body_start < 0:
            member = _MEMBER_LINES.search(buf, after, gap_end)
            unknown += count_unknown(buf, after, gap_end if member is None else member.start())
            if member is not None:
                body_start = member.start()
                body_line = line + buf.count(b"\n", start + 1, body_start + 1)
                # -1: the member found is itself a rule line.
                rule_from = -1 if member.group(1)[:1] in _RULE_INITIALS else member.end()
        if gap_end < end and rule_from >= 0 and _RULE_LINES.search(buf, rule_from, gap_end) is None:
            # No Allow or Disallow line before the next User-agent: it joins
            # this group, and so do any Crawl-delay, Request-rate or
            # Visit-time lines read so far (SPEC 2, RFC 9309 §2.2.4).
            continue
        if body_start < 0:
            body_start = gap_end
            body_line = line + buf.count(b"\n", start + 1, body_start + 1)
        body = buf[body_start:gap_end]
        # Files often repeat one body for many agents: hold it once.
        bodies.append(seen.setdefault(body, body))
        body_lines.append(body_line)
        agent_ends.append(len(agent_values))
        body_start = -1
    return FileLayout(
        bodies, body_lines, agent_values, agent_numbers, agent_ends, list(sitemaps), host, unknown
    )


def _fast_member_line() -> re.Pattern[bytes]:
    """One match per line: (plain Disallow value, plain Allow value, star key, star prefix,
    star, star piece, star anchor, key, value, value2).

    A plain value starts with ``/`` and holds only characters that need no
    percent-normalising (no ``%``, ``*``, ``$``, space or non-ASCII): it is
    its own normalised form and needs no Python work. A value starting with
    ``/`` (or ``*``) of such characters, ``%`` and non-ASCII, with stars and
    maybe a final ``$`` (``/*foo``, ``/a/*.php$``, ``/*%7e*b``, ``/a$``,
    ``/a%20b``, ``*.php$``) is cut: its key, the text before the first star,
    the star, the text after it (further stars included) and the ``$``; the
    caller normalises what needs it (:func:`.groups.read_rules`). Any other
    member line falls to the general groups, as :func:`_lines` reads it.
    """
    allow = _trie([s.encode() for s in _SPELLINGS["allow"]])
    disallow = _trie([s.encode() for s in _SPELLINGS["disallow"]])
    # "#" is no value character: it starts a comment.
    value_chars = b"[" + re.escape(UNRESERVED + RESERVED.replace("#", "")).encode("ascii") + b"]"
    # Possessive (see .possessive): a value that is no such rule fails in one pass.
    plain = rb" *:[ ]*(/" + value_chars + rb"*+) *(?![^#\n])"
    # Cut values may hold escapes and non-ASCII (normalised by the caller) and
    # more stars: a hostile file's ``/*%7e<letters>%2f`` or ``/*x1*y1*.php$``
    # is cut here, not read again value by value; ``*.php$`` has no prefix.
    cut = value_chars[:-1] + rb"%\x80-\xff]"
    star = (
        rb" *:[ ]*(/" + cut + rb"*+|(?=\*))(\*?)(" + cut + rb"*+(?:\*" + cut + rb"*+)*+)(\$?)"
        rb" *(?![^#\n])"
    )
    general = _line(_MEMBERS)
    # Disallow first: most member lines are Disallow lines.
    pattern = (
        rb"\n(?: *(?i:" + disallow + rb")" + plain + rb"| *(?i:" + allow + rb")" + plain
        + rb"| *((?i:" + disallow + rb"|" + allow + rb"))" + star
        + rb"|" + general + rb")?"
    )  # fmt: skip
    return compile_possessive(pattern)


_FAST_MEMBER_LINE = _fast_member_line()

MEMBER_FIELDS = 10
"""Groups of :func:`_fast_member_line`: a member line is that many columns."""


def member_columns(body: bytes) -> list[bytes | None]:
    """The groups of :func:`_fast_member_line` for every line of a group's member text, flat.

    ``body`` starts with the ``\\n`` before its first line, as
    :func:`read_layout` cuts it, and every line is one match (lines that are
    no member line match the ``\\n`` alone). The list holds, per line, the
    text before the line's ``\\n`` (what the previous match left of its line)
    then its :data:`MEMBER_FIELDS` groups, ``None`` where a group took no
    part: so ``columns[1 + k :: MEMBER_FIELDS + 1]`` is group ``k`` of every
    line, by line offset. One flat list of bytes, made by ``re.split``: no
    tuple per line for the garbage collector to walk. Bytes: a plain value
    is ASCII, and an index keeps it as bytes (16 bytes of memory fewer than
    a string, per rule); other values are for :func:`decode_value`.
    """
    return _FAST_MEMBER_LINE.split(body)


def line_starts(body: bytes) -> array[int]:
    """Where each line of a group's member text starts: the offset of its leading ``\\n``."""
    return array("i", [match.start() for match in _LINE_BREAK.finditer(body)])


def member_line(body: bytes, start: int) -> tuple[str, str] | None:
    """(key as written, value) of the member line whose ``\\n`` is at ``start``, if it is one.

    How a rule's text is found again: an index keeps each rule's line
    number, not its text (see :func:`line_starts`).
    """
    match = _MEMBER_LINES.match(body, start)
    if match is None:
        return None
    key, value = _key_value(match)
    return key.decode("ascii"), decode_value(value)


def extra_items(body: bytes) -> list[tuple[str, str]]:
    """(key as written, value) of each ``Crawl-delay``, ``Request-rate``, ``Visit-time`` line."""
    found = map(_key_value, _EXTRA_LINES.finditer(body))
    return [(key.decode("ascii"), decode_value(value)) for key, value in found]
