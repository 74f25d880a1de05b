"""What the reader ignored or read leniently in a robots.txt, line by line (SPEC 1, 2, 6).

``robotrules lint`` shows it, as Google's parser reports its lines: a
misspelt key it accepted, a missing colon, an unknown key, a rule before
any ``User-agent`` line, the part past the size limit. It walks the file
once more but decides nothing itself: each line is put to the reader's own
patterns (:data:`.reading.KNOWN_LINES`, :func:`.reading.count_unknown`,
:func:`.reading.member_line`, :data:`.reading.KEY_NAMES`) and values to the
directive parsers a crawl uses, so what it says and what a crawler reads
cannot disagree. :func:`doubts` says when a file is no robots.txt at all
(binary, an HTML page). For the operator, never on a crawl's path.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NamedTuple

from scrapy_robotrules.engine.robots.pacing_lines import (
    parse_crawl_delay,
    parse_request_rate,
    parse_window,
)
from scrapy_robotrules.engine.robots.reading import (
    BLANKS,
    DEFAULT_MAX_SIZE,
    KEY_NAMES,
    KNOWN_LINES,
    count_unknown,
    decode_value,
    member_line,
    read_bytes,
)
from scrapy_robotrules.engine.robots.signal_lines import (
    MAX_LICENSES,
    license_lines,
    unread_license_lines,
    usage_lines,
)

__all__ = ["Finding", "doubts", "lint"]

_SHOWN = 72
"""Characters of a line shown; the rest is cut to ``...``."""
_USAGE_KEYS = ("content-usage", "content-signal", "content-signals")
_HTML_STARTS = (b"<!doctype", b"<html", b"<head", b"<body", b"<?xml", b"<!--")
_VALUES: dict[str, Callable[[str], object]] = {
    "crawl-delay": parse_crawl_delay,
    "request-rate": parse_request_rate,
    "visit-time": parse_window,
}
_BLANK_BYTES = BLANKS.encode("ascii")


class Finding(NamedTuple):
    """A line the reader ignored or read leniently: its number, its text, and why."""

    line: int
    text: str
    why: str

    def __str__(self) -> str:
        return f"{self.line}: {self.text} — {self.why}"


def _shown(line: bytes) -> str:
    """A line as printed: bytes that are not UTF-8 and control characters escaped, cut short."""
    text = line.decode("utf-8", "backslashreplace").strip(BLANKS)
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _name(key: bytes) -> str:
    """The key a spelling is read as, written as files usually write it: ``Disallow``."""
    return KEY_NAMES[key.decode("ascii").lower()].capitalize()


def _ignored(content: bytes) -> str:
    """Why a line with no key the reader knows is ignored."""
    key, colon, _ = content.partition(b":")
    key = key.strip(_BLANK_BYTES)
    if colon:
        if not key:
            return "no field name before the colon: ignored"
        return f"unknown field {_shown(key)!r}: ignored"
    words = key.split()
    known = [
        w for w in (b" ".join(words[:2]), words[0]) if w.decode("latin-1").lower() in KEY_NAMES
    ]
    if known:
        return f"no colon after {_name(known[0])}, and not one value after it: ignored"
    return "no colon and no known field: ignored"


def _read(key: bytes, value: bytes, *, colon: bool, ignored: bool) -> list[str]:
    """What is said of a line whose key the reader knows (``ignored``: a member line before
    any ``User-agent`` line, which the reader leaves out of every group)."""
    name = KEY_NAMES[key.decode("ascii").lower()]
    written = decode_value(value)
    if ignored:
        return [f"{_name(key)} line before any User-agent line: ignored"]
    why = []
    if key.decode("ascii").lower() != name:
        why.append(f"accepted typo: {key.decode('ascii')!r} read as {_name(key)}")
    if not colon:
        why.append(f"missing colon: read as '{_name(key)}: {_shown(value)}'")
    parse = _VALUES.get(name)
    if parse is not None and parse(written) is None:
        why.append(f"{_name(key)} value {_shown(value)!r} not understood: ignored")
    elif name == "sitemap" and not written:
        why.append("empty Sitemap: ignored")
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        why.append("bytes that are not UTF-8, read as they are (a rule matches them %-encoded)")
    return why


def lint(content: bytes | str, max_size: int = DEFAULT_MAX_SIZE) -> list[Finding]:
    """The lines of ``content`` that the reader ignored or read leniently, in file order."""
    data, truncated = read_bytes(content, max_size)
    buf = b"\n" + data
    usage = {line for line, _, _ in usage_lines(data)}
    licenses = {line for line, _ in license_lines(data)}
    unread_licenses = set(unread_license_lines(data))
    agents = hosts = 0
    found: list[Finding] = []
    at = 0
    for number, line in enumerate(data.split(b"\n")[:-1], 1):
        start, at = at, at + 1 + len(line)  # start: the "\n" before the line
        text = line.split(b"#", 1)[0]
        if not text.strip(_BLANK_BYTES):
            continue
        if number in licenses:
            continue  # a License line (RSL 1.0), read wherever it stands
        if number in unread_licenses:
            past = f"a License line past the first {MAX_LICENSES}, not read (MAX_LICENSES)"
            found.append(Finding(number, _shown(line), past))
            continue
        if count_unknown(buf, start, at):
            field = text.partition(b":")[0].strip(_BLANK_BYTES).decode("latin-1")
            if field.lower() not in _USAGE_KEYS:
                found.append(Finding(number, _shown(line), _ignored(text)))
            elif number not in usage:
                unread = f"{field} line not read as a usage preference"
                if usage:
                    unread += f" (only the first {len(usage)} are read)"
                found.append(Finding(number, _shown(line), unread))
            continue
        known = KNOWN_LINES.match(buf, start, at)
        assert known is not None  # a line with content is known or unknown
        key, value = known[1], known[3] if known[2] is None else known[2]
        member = member_line(buf, start) is not None
        why = _read(key, value, colon=known[2] is not None, ignored=member and not agents)
        name = _name(key)
        agents += name == "User-agent"
        if name == "Host" and decode_value(value):
            hosts += 1
            if hosts > 1:
                why.append("another Host line: only the first is read")
        if why:
            found.append(Finding(number, _shown(line), "; ".join(why)))
    if truncated:
        whole, _ = read_bytes(content, sys.maxsize)
        kept = data.count(b"\n")
        size = len(content) if isinstance(content, bytes) else len(whole)
        found.append(
            Finding(
                kept + 1,
                _shown(whole.split(b"\n")[kept]),
                f"past the size limit of {max_size} bytes (the file has {size}):"
                " this line and the rest are not read",
            )
        )
    return found


def doubts(content: bytes | str, max_size: int = DEFAULT_MAX_SIZE) -> list[str]:
    """Why ``content`` does not look like a robots.txt at all; empty when it does.

    A crawler reads such a file all the same (every line it cannot read is
    ignored, so it most likely allows everything): these are for a person.
    """
    raw = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content
    data, _ = read_bytes(raw, max_size)
    why = []
    if b"\0" in raw:
        why.append("it holds NUL bytes, as binary files do")
    if data.lstrip()[:16].lower().startswith(_HTML_STARTS):
        why.append("it starts like an HTML or XML page")
    buf = b"\n" + data
    if (
        count_unknown(buf)
        and next(KNOWN_LINES.finditer(buf), None) is None
        and not usage_lines(data)
    ):
        why.append("no line of it is a robots.txt line")
    return why
