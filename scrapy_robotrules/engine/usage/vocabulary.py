"""The vocabulary of usage preferences: purposes, statements, and reading one statement's value.

Two vocabularies are read: IETF AI Preferences (the drafts of
:data:`AIPREF_DRAFTS`: ``train-ai`` and ``search``, ``y``/``n`` in a
structured-field dictionary, vocab §4 and §6) and Cloudflare's Content
Signals (:data:`CONTENT_SIGNALS_TEXT`: ``search=yes, ai-train=no,
ai-input=yes``, and the looser forms sites write), from robots.txt rules
and from response headers (attach §2; read by :mod:`.headers`). Labels
outside the vocabularies are kept as data (``bots=n`` of earlier aipref
drafts, Content Signals' ``use``), never read as a purpose; a value that
cannot be read means "unknown", which is no consent; nothing raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scrapy_robotrules.engine.usage.structured import (
    MAX_MEMBERS,
    MAX_VALUE_CHARS,
    Token,
    parse_dictionary,
)

__all__ = [
    "AIPREF_DRAFTS",
    "AI_INPUT",
    "ALLOWED",
    "CONTENT_SIGNAL",
    "CONTENT_SIGNALS_TEXT",
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
    "aipref_members",
    "aipref_preferences",
    "content_signal_preferences",
    "followed_texts",
    "make_statement",
    "read_aipref",
    "read_content_signal",
]

AIPREF_DRAFTS = {"vocab": "draft-ietf-aipref-vocab-08", "attach": "draft-ietf-aipref-attach-05"}
"""The IETF aipref drafts this package follows: the one place a new revision is named.

Sections cited in this package (``vocab §6.5``, ``attach §3.1``) are of
these revisions; ``explain()`` and the documentation name them.
"""
CONTENT_SIGNALS_TEXT = "Cloudflare's Content Signals Policy (draft-romm-aipref-contentsignals-00)"
"""The text the ``Content-Signal`` vocabulary is read by."""

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
_SIGNAL_VALUES = {"yes": True, "no": False, "allow": True, "disallow": False}
"""Content Signals' values: ``yes``/``no`` as the policy writes them, ``allow``/``disallow`` as
sites also do (case ignored)."""
_SIGNAL_DATA = frozenset({"use"})
"""Content Signals keys that are data, not purposes: ``use`` (``immediate``, ``reference``,
``full``) says how content may be used once it is, and is kept as written."""


def followed_texts(kinds: Iterable[str]) -> str:
    """The note naming the texts the statements of ``kinds`` were read by (for ``explain()``)."""
    texts = []
    if CONTENT_USAGE in kinds:
        texts.append("aipref " + ", ".join(AIPREF_DRAFTS.values()))
    if CONTENT_SIGNAL in kinds:
        texts.append(CONTENT_SIGNALS_TEXT)
    return "read as " + "; ".join(texts) if texts else ""


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
    data: tuple[tuple[str, str], ...] = ()
    """(label, value) of the members that name no purpose, kept as data: no effect.

    Unknown aipref labels (``bots``, ``ai-output`` of earlier drafts), Content
    Signals' ``use``; a value shown as its text (``n``, ``immediate``)."""
    name: str = ""
    """The field name as written where it is another spelling of ``kind`` (``Content-Signals``)."""

    def __str__(self) -> str:
        kind = self.name or self.kind
        where = {
            ROBOTS: f"robots.txt line {self.line}",
            HEADER: f"{kind} header {self.line}",
            META: f'<meta name="{kind}"> {self.line}',
            TDMREP_FILE: f"tdmrep.json rule {self.line}",
        }[self.source]
        if self.source == ROBOTS:
            return f"{where}: {kind}: {self.value}"
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
            "data": dict(self.data),
            "name": self.name or self.kind,
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
    preferences, unknown, _ = read_aipref(value)
    return preferences, unknown


def read_aipref(value: str) -> tuple[dict[str, bool], tuple[str, ...], tuple[tuple[str, str], ...]]:
    """:func:`aipref_preferences`, and the unknown labels with their values, kept as data."""
    return aipref_members(parse_dictionary(value).items())


def _shown(item: object) -> str:
    """A dictionary member's value as RFC 9651 writes it (parameters dropped)."""
    if item is True or item is False:
        return "?1" if item else "?0"
    if item is None:
        return "(inner list)"
    if isinstance(item, str) and not isinstance(item, Token):
        return '"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(item)


def aipref_members(
    members: Iterable[tuple[str, object]],
) -> tuple[dict[str, bool], tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Preferences, labels or values not understood, and data of a dictionary's members."""
    preferences: dict[str, bool] = {}
    unknown: list[str] = []
    data: list[tuple[str, str]] = []
    for key, item in members:
        purpose = _AIPREF_LABELS.get(key)
        if purpose is None:
            unknown.append(key)
            data.append((key, _shown(item)))
        elif isinstance(item, Token) and item in ("y", "n"):
            preferences[purpose] = item == "y"
        else:
            unknown.append(f"{key}={item!r}" if item is not True else key)
    return preferences, tuple(unknown), tuple(data)


def content_signal_preferences(value: str) -> tuple[dict[str, bool], tuple[str, ...]]:
    """Preferences and unknown parts of a Content-Signal value (``search=yes, ai-train=no``).

    :func:`read_content_signal` without the data it keeps.
    """
    preferences, unknown, _ = read_content_signal(value)
    return preferences, unknown


def read_content_signal(
    value: str,
) -> tuple[dict[str, bool], tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Preferences, parts not understood, and data of a Content-Signal value.

    Read leniently, as sites write it: comma-separated ``name=value``
    pairs, blanks and case ignored; ``yes`` or ``allow`` allows, ``no`` or
    ``disallow`` disallows, and a signal given both ways in one value is
    disallowed (a refusal wins, as vocab §5.1 combines statements). ``use``
    and names that are no signal are kept as data; a part that cannot be
    read (another value, no ``=``) is reported and grants nothing.
    """
    preferences: dict[str, bool] = {}
    unknown: list[str] = []
    data: list[tuple[str, str]] = []
    for part in value[:MAX_VALUE_CHARS].split(",")[:MAX_MEMBERS]:
        name, equals, said = (s.strip().lower() for s in part.partition("="))
        if not name and not said:
            continue
        purpose = _SIGNAL_LABELS.get(name)
        allowed = _SIGNAL_VALUES.get(said)
        if purpose is not None and equals and allowed is not None:
            preferences[purpose] = allowed and preferences.get(purpose, True)
            continue
        if equals and purpose is None and name and said:
            data.append((name, part.partition("=")[2].strip()))
            if name in _SIGNAL_DATA:
                continue
        unknown.append(part.strip())
    return preferences, tuple(unknown), tuple(data)


def make_statement(
    source: str,
    kind: str,
    value: str,
    *,
    line: int | None = None,
    path: str | None = None,
    said: str | None = None,
    name: str = "",
) -> Statement:
    """``value`` as written; ``said``, the statement of preference in it (all of it by default).

    ``name``: the field name as written, when it is another spelling of ``kind``.
    """
    shown = value[:MAX_VALUE_CHARS]
    said = value if said is None else said
    try:
        if kind == CONTENT_USAGE:
            preferences, unknown, data = read_aipref(said)
        else:
            preferences, unknown, data = read_content_signal(said)
    except ValueError as exc:
        error = f"unparsable: {exc}"
        return Statement(source, kind, shown, line=line, path=path, error=error, name=name)
    return Statement(source, kind, shown, preferences, line, path, unknown, data=data, name=name)
