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
    "MAX_HEADERS",
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

MAX_HEADERS = 32
"""Header lines of each kind read per response."""

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
    members = parse_dictionary(value)
    preferences: dict[str, bool] = {}
    unknown: list[str] = []
    for key, item in members.items():
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

    Several ``Content-Usage`` lines are one field (RFC 9651 §4.2: joined
    with commas) and so one statement.
    """
    statements: list[Statement] = []
    usage = [_text(v) for _, v in zip(range(MAX_HEADERS), content_usage, strict=False)]
    if usage:
        statements.append(make_statement(HEADER, CONTENT_USAGE, ", ".join(usage), line=1))
    for number, value in enumerate(content_signal, 1):
        if number > MAX_HEADERS:
            break
        statements.append(make_statement(HEADER, CONTENT_SIGNAL, _text(value), line=number))
    return statements
