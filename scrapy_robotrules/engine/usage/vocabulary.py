"""The vocabulary of usage preferences: purposes, statements, and reading one statement's value.

No SPEC section: usage preferences are outside it. Two vocabularies are read: IETF AI Preferences
(draft-ietf-aipref-vocab-07: ``train-ai`` and ``search``, ``y``/``n`` in a
structured-field dictionary, §4 and §6) and Cloudflare's Content Signals
(draft-romm-aipref-contentsignals-00: ``search=yes, ai-train=no,
ai-input=yes``), from robots.txt rules and from response headers
(draft-ietf-aipref-attach-05 §2). Unknown labels are kept and reported; a
value that cannot be parsed means "unknown"; nothing raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .structured import MAX_MEMBERS, MAX_VALUE_CHARS, Token, parse_dictionary

__all__ = [
    "AI_INPUT",
    "ALLOWED",
    "CONTENT_SIGNAL",
    "CONTENT_USAGE",
    "DISALLOWED",
    "HEADER",
    "MAX_MEMBERS",
    "MAX_VALUE_CHARS",
    "META",
    "PURPOSES",
    "ROBOTS",
    "SEARCH",
    "TDM",
    "TDMREP_FILE",
    "TDM_RESERVATION",
    "TRAIN_AI",
    "UNKNOWN",
    "Preference",
    "Statement",
    "aipref_preferences",
    "content_signal_preferences",
    "header_statements",
    "make_statement",
    "read_headers",
]

TRAIN_AI = "train-ai"
SEARCH = "search"
AI_INPUT = "ai-input"
TDM = "tdm"
PURPOSES = (TRAIN_AI, SEARCH, AI_INPUT, TDM)
"""The purposes a crawl may declare (``ROBOTRULES_PURPOSES``) and the view answers for."""
ALLOWED = "allowed"
DISALLOWED = "disallowed"
UNKNOWN = "unknown"

CONTENT_USAGE = "Content-Usage"
CONTENT_SIGNAL = "Content-Signal"
TDM_RESERVATION = "tdm-reservation"

ROBOTS = "robots.txt"
HEADER = "header"
META = "meta"
TDMREP_FILE = "tdmrep.json"

_AIPREF_LABELS = {TRAIN_AI: TRAIN_AI, SEARCH: SEARCH}
"""aipref vocab §6.1: labels (case-sensitive) and the purposes they name."""
_SIGNAL_LABELS = {"ai-train": TRAIN_AI, "search": SEARCH, "ai-input": AI_INPUT}
"""Content Signals: the three signals and the purposes they name."""


@dataclass(frozen=True)
class Statement:
    """One statement of preference as read: where, what it says, what was not understood."""

    source: str
    """:data:`ROBOTS`, :data:`HEADER`, :data:`META` or :data:`TDMREP_FILE`."""
    kind: str
    """:data:`CONTENT_USAGE`, :data:`CONTENT_SIGNAL` or :data:`TDM_RESERVATION`."""
    value: str
    """The value as written (at most :data:`MAX_VALUE_CHARS` characters)."""
    preferences: Mapping[str, bool] = field(default_factory=dict)
    """Purpose -> allowed, for the purposes it states."""
    line: int | None = None
    """robots.txt line, header or meta number, or tdmrep.json rule number (1-based)."""
    path: str | None = None
    """The robots.txt rule's path, or the tdmrep.json ``location``, as written."""
    unknown: tuple[str, ...] = ()
    """Labels or tokens not understood: kept, no effect."""
    error: str = ""
    """Why the value could not be read (its preferences are then unknown)."""

    def __str__(self) -> str:
        where = {
            ROBOTS: f"robots.txt line {self.line}",
            HEADER: f"{self.kind} header {self.line}",
            META: f'<meta name="{self.kind}"> {self.line}',
            TDMREP_FILE: f"tdmrep.json rule {self.line}",
        }[self.source]
        if self.source == ROBOTS:
            return f"{where}: {self.kind}: {self.value}"
        if self.source == TDMREP_FILE:
            return f"{where}: location {self.path!r}, tdm-reservation {self.value}"
        return f"{where}: {self.value!r}"

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "kind": self.kind,
            "value": self.value,
            "line": self.line,
            "path": self.path,
            "preferences": {k: (ALLOWED if v else DISALLOWED) for k, v in self.preferences.items()},
            "unknown": list(self.unknown),
            "error": self.error,
        }


@dataclass(frozen=True)
class Preference:
    """One purpose's answer and the statements that gave it."""

    purpose: str
    state: str = UNKNOWN
    """:data:`ALLOWED`, :data:`DISALLOWED` or :data:`UNKNOWN`."""
    sources: tuple[Statement, ...] = ()
    """The statements that decided it (those saying "no" when disallowed)."""

    def __str__(self) -> str:
        if not self.sources:
            return f"{self.purpose}: {self.state}"
        return f"{self.purpose}: {self.state} <- " + "; ".join(str(s) for s in self.sources)


def aipref_preferences(value: str) -> tuple[dict[str, bool], tuple[str, ...]]:
    """Preferences and unknown labels of an aipref statement; ``ValueError`` if unparsable.

    vocab §6.5: the token ``y`` allows, ``n`` disallows, anything else for a
    known label (another token, a string, a boolean) leaves it unknown, and
    is reported; unknown labels are ignored (§6.4), and reported.
    """
    return _aipref_members(parse_dictionary(value).items())


def _aipref_members(
    members: Iterable[tuple[str, object]],
) -> tuple[dict[str, bool], tuple[str, ...]]:
    preferences: dict[str, bool] = {}
    unknown: list[str] = []
    for key, item in members:
        purpose = _AIPREF_LABELS.get(key)
        if purpose is None:
            unknown.append(key)
        elif isinstance(item, Token) and item in ("y", "n"):
            preferences[purpose] = item == "y"
        else:
            unknown.append(f"{key}={item!r}" if item is not True else key)
    return preferences, tuple(unknown)


def content_signal_preferences(value: str) -> tuple[dict[str, bool], tuple[str, ...]]:
    """Preferences and unknown parts of a Content-Signal value (``search=yes, ai-train=no``).

    Read leniently, as published files write it: comma-separated
    ``name=value`` pairs, blanks and case ignored; ``yes`` allows, ``no``
    disallows; anything else is reported and has no effect.
    """
    preferences: dict[str, bool] = {}
    unknown: list[str] = []
    for part in value[:MAX_VALUE_CHARS].split(",")[:MAX_MEMBERS]:
        name, equals, said = (s.strip().lower() for s in part.partition("="))
        if not name and not said:
            continue
        purpose = _SIGNAL_LABELS.get(name)
        if purpose is not None and equals and said in ("yes", "no"):
            preferences[purpose] = said == "yes"
        else:
            unknown.append(part.strip())
    return preferences, tuple(unknown)


def make_statement(
    source: str,
    kind: str,
    value: str,
    *,
    line: int | None = None,
    path: str | None = None,
    said: str | None = None,
) -> Statement:
    """``value`` as written; ``said``, the statement of preference in it (all of it by default)."""
    shown = value[:MAX_VALUE_CHARS]
    said = value if said is None else said
    try:
        if kind == CONTENT_USAGE:
            preferences, unknown = aipref_preferences(said)
        else:
            preferences, unknown = content_signal_preferences(said)
    except ValueError as exc:
        return Statement(source, kind, shown, line=line, path=path, error=f"unparsable: {exc}")
    return Statement(source, kind, shown, preferences, line=line, path=path, unknown=unknown)


# Response headers (attach §2; Content Signals; TDMRep §6.2 is in .tdmrep).


def _text(value: str | bytes) -> str:
    if isinstance(value, bytes):
        return value[: MAX_VALUE_CHARS + 1].decode("latin-1")
    return value[: MAX_VALUE_CHARS + 1]


def header_statements(
    content_usage: Iterable[str | bytes] = (), content_signal: Iterable[str | bytes] = ()
) -> list[Statement]:
    """Statements of the ``Content-Usage`` and ``Content-Signal`` headers of a response.

    :func:`read_headers` without its notes.
    """
    return read_headers(content_usage, content_signal)[0]


def read_headers(
    content_usage: Iterable[str | bytes] = (), content_signal: Iterable[str | bytes] = ()
) -> tuple[list[Statement], list[str]]:
    """Statements of every ``Content-Usage`` and ``Content-Signal`` header line, and notes.

    Every line is read, each up to :data:`MAX_VALUE_CHARS` characters, so
    the work follows the bytes of the headers; what is kept does not: the
    statements are the lines that decide (a few at most), the notes say how
    many lines were read besides.
    """
    statements, notes = _content_usage([_text(value) for value in content_usage])
    signals, signal_notes = _content_signal(_text(value) for value in content_signal)
    return statements + signals, notes + signal_notes


def _content_usage(lines: list[str]) -> tuple[list[Statement], list[str]]:
    """The ``Content-Usage`` field: its lines are one dictionary (RFC 9651 §4.2).

    Read as if joined with commas, each line parsed in turn: a repeated key
    keeps its last value (§4.2.2) and a line that does not parse leaves the
    whole field unparsable. The statements are the lines holding the
    values that count, so ``explain()`` shows the line that decided.
    """
    if len(lines) <= 1:
        return [make_statement(HEADER, CONTENT_USAGE, line, line=1) for line in lines], []
    members: dict[str, tuple[object, int]] = {}
    for number, line in enumerate(lines, 1):
        try:
            if not line.strip(" \t"):
                raise ValueError("an empty line among several")
            for key, item in parse_dictionary(line).items():
                members.pop(key, None)
                members[key] = (item, number)
            if len(members) > MAX_MEMBERS:
                raise ValueError(f"more than {MAX_MEMBERS} members")
        except ValueError as exc:
            error = f"unparsable: {exc}"
            statement = Statement(
                HEADER, CONTENT_USAGE, line[:MAX_VALUE_CHARS], line=number, error=error
            )
            return [statement], [f"Content-Usage: {len(lines)} header lines read as one field"]
    statements = []
    for number in sorted({number for _, number in members.values()}):
        preferences, unknown = _aipref_members(
            (key, item) for key, (item, decided) in members.items() if decided == number
        )
        value = lines[number - 1][:MAX_VALUE_CHARS]
        statements.append(
            Statement(HEADER, CONTENT_USAGE, value, preferences, line=number, unknown=unknown)
        )
    note = (
        f"Content-Usage: {len(lines)} header lines read as one field, a repeated key keeping"
        f" its last value: {len(lines) - len(statements)} lines hold none that counts"
    )
    return statements, [note] if len(statements) < len(lines) else []


def _content_signal(lines: Iterable[str]) -> tuple[list[Statement], list[str]]:
    """``Content-Signal`` lines: each a statement, combined with the others as vocab §5.1 says.

    Any "no" disallows, else any "yes" allows: a line saying again what an
    earlier one said changes nothing, and is counted in a note rather than
    kept. Kept: the first line, each line saying something new of a
    purpose, and the first with parts not understood.
    """
    statements: list[Statement] = []
    said: set[tuple[str, bool]] = set()
    unknown_kept = False
    number = 0
    for number, line in enumerate(lines, 1):
        statement = make_statement(HEADER, CONTENT_SIGNAL, line, line=number)
        new = set(statement.preferences.items()) - said
        if not statements or new or (statement.unknown and not unknown_kept):
            statements.append(statement)
            said |= new
            unknown_kept = unknown_kept or bool(statement.unknown)
    repeated = number - len(statements)
    if not repeated:
        return statements, []
    return statements, [
        f"Content-Signal: {number} header lines read; {repeated} say again what the lines"
        " listed say, and are not listed"
    ]
