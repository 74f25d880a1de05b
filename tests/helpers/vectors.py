"""Loading the conformance vectors (``tests/data/vectors.txt``).

Format (see the file's header): one vector per line, fields separated by ``' | '``::

    precedence | agent_match | agent | robots.txt | url | expected | source

robots.txt, agent and url use C escapes (``\\n \\r \\t \\\\ \\xHH``); ``\\xHH`` is a
raw byte, so a robots.txt holding one is ``bytes``. ``<empty>`` is the empty string.

The repository keeps its own byte-identical copy of the project's shared
vectors (``shared/conformance/vectors.txt``, where ``shared`` is a sibling of
the repository root, or the directory named by ``ROBOTRULES_SHARED``); when
that directory is there, a test checks the two are still equal.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from scrapy_robotrules.engine.robots.agents import AgentMatch, check_agent_match
from scrapy_robotrules.engine.robots.precedence import Precedence, check_precedence
from tests.helpers import DATA_DIR, REPO_ROOT

FIELD_SEPARATOR = " | "
EMPTY = "<empty>"
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\"}
_HEX = "0123456789abcdefABCDEF"


def decode_escapes(text: str) -> str | bytes:
    """Decode ``\\n \\r \\t \\\\ \\xHH``; bytes when a ``\\xHH`` occurs, str otherwise."""
    out = bytearray()
    has_raw_byte = False
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out += char.encode("utf-8")
            i += 1
            continue
        escape = text[i + 1 : i + 2]
        if escape in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[escape].encode("ascii")
            i += 2
        elif escape == "x" and len(text) >= i + 4 and all(c in _HEX for c in text[i + 2 : i + 4]):
            out.append(int(text[i + 2 : i + 4], 16))
            has_raw_byte = True
            i += 4
        else:
            raise ValueError(f"bad escape at offset {i} in {text!r}")
    return bytes(out) if has_raw_byte else out.decode("utf-8")


def decode_field(field: str) -> str | bytes:
    """One field of a vector: ``<empty>`` or C-escaped text."""
    return "" if field == EMPTY else decode_escapes(field)


def decode_text_field(field: str) -> str:
    """An agent or url field as str (a raw byte becomes a surrogate escape)."""
    value = decode_field(field)
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


@dataclass(frozen=True)
class Vector:
    line: int  # line number in vectors.txt
    precedence: Precedence
    agent_match: AgentMatch
    agent: str
    robots_txt: str | bytes
    url: str
    expected: bool  # True = allowed
    source: str

    @property
    def robots_url(self) -> str | None:
        """An absolute url's origin + /robots.txt; None for a bare path."""
        if "://" not in self.url:
            return None
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}/robots.txt"

    @property
    def id(self) -> str:
        return f"vectors.txt:{self.line}"


def shared_dir() -> Path:
    """``$ROBOTRULES_SHARED``, or ``shared`` beside the repository root (it may not exist)."""
    override = os.environ.get("ROBOTRULES_SHARED")
    if override:
        return Path(override)
    return REPO_ROOT.parent / "shared"


def vectors_path() -> Path:
    """The repository's copy of the vectors: every test reads this one."""
    return DATA_DIR / "vectors.txt"


def shared_vectors_path() -> Path:
    return shared_dir() / "conformance" / "vectors.txt"


def parse_vector(line: str, number: int) -> Vector:
    fields = line.split(FIELD_SEPARATOR, 6)
    if len(fields) != 7:
        raise ValueError(f"vectors.txt:{number}: expected 7 fields, got {len(fields)}")
    precedence, agent_match, agent, robots_txt, url, expected, source = fields
    if expected not in ("allowed", "disallowed"):
        raise ValueError(f"vectors.txt:{number}: bad expected value {expected!r}")
    return Vector(
        line=number,
        precedence=check_precedence(precedence),
        agent_match=check_agent_match(agent_match),
        agent=decode_text_field(agent),
        robots_txt=decode_field(robots_txt),
        url=decode_text_field(url),
        expected=expected == "allowed",
        source=source,
    )


def vector_lines(path: Path | None = None) -> list[tuple[int, str]]:
    """(line number, text) of every vector line: not blank, not a '#' comment."""
    text = (path or vectors_path()).read_text(encoding="utf-8")
    return [
        (number, line)
        for number, line in enumerate(text.split("\n"), start=1)
        if line.strip() and not line.startswith("#")
    ]


def load_vectors(path: Path | None = None) -> list[Vector]:
    return [parse_vector(line.rstrip("\r"), number) for number, line in vector_lines(path)]
