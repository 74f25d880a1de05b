"""Usage preferences: what a site says its content may be used for, per URL and purpose.

Three families of signals, read as their current texts say:

- IETF AI Preferences: the vocabulary (draft-ietf-aipref-vocab-07, 19 August
  2026: ``train-ai`` and ``search``, values ``y``/``n``, a structured-field
  dictionary, §4 and §6) attached as a ``Content-Usage`` rule in robots.txt
  groups and as a ``Content-Usage`` response header
  (draft-ietf-aipref-attach-05, 19 August 2026, §2 and §3);
- Cloudflare's Content Signals: ``Content-Signal: search=yes, ai-train=no,
  ai-input=yes`` in robots.txt groups and as a header (draft-romm-aipref-
  contentsignals-00, 1 October 2025);
- W3C TDMRep (Community Group final report, 10 May 2024): ``/.well-known/
  tdmrep.json``, the ``tdm-reservation`` and ``tdm-policy`` headers and meta
  tags (see :mod:`.tdmrep`).

Each purpose (:data:`PURPOSES`) comes out allowed, disallowed or unknown,
with the statements behind it. Several statements on one purpose combine as
vocab §5.1 says: any "no" disallows, else any "yes" allows, else unknown.
TDM is TDMRep's alone, and there a later technique overrides an earlier one
(TDMRep §6.7). Input is never trusted: unknown tokens are kept and reported,
a value that cannot be parsed means "unknown", work is bounded, nothing raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..agents import select
from ..patterns import Pattern, compile_matcher
from ..urls import request_path

if TYPE_CHECKING:
    from ..robotstxt import Decision, RobotsTxt
    from .tdmrep import TdmRep

__all__ = [
    "ALLOWED",
    "DISALLOWED",
    "PURPOSES",
    "UNKNOWN",
    "USAGE_REFUSAL",
    "Preference",
    "Statement",
    "UsageView",
    "aipref_preferences",
    "content_signal_preferences",
    "header_statements",
    "parse_dictionary",
    "refuse_purposes",
    "robots_statements",
    "usage_view",
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

MAX_VALUE_CHARS = 4096
"""Characters of one value read; a longer one is not parsed (its preferences are unknown)."""
MAX_HEADERS = 32
"""Header lines of each kind read per response."""
MAX_MEMBERS = 64
"""Dictionary members (or Content-Signal pairs) read of one value."""

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


@dataclass(frozen=True)
class UsageView:
    """The usage preferences that apply to one URL, per purpose, and why."""

    url: str
    preferences: Mapping[str, Preference]
    statements: tuple[Statement, ...] = ()
    """Every statement that applied, in reading order."""
    notes: tuple[str, ...] = ()
    """What was read and had no effect, or could not be read."""
    tdm_policy: str | None = None
    """TDMRep ``tdm-policy`` that goes with a reservation, when one is given."""

    def state(self, purpose: str) -> str:
        preference = self.preferences.get(purpose)
        return preference.state if preference is not None else UNKNOWN

    def refused(self, purposes: Iterable[str]) -> list[Preference]:
        """The preferences among ``purposes`` that are disallowed."""
        return [
            self.preferences[p]
            for p in purposes
            if p in self.preferences and self.preferences[p].state == DISALLOWED
        ]

    def explain(self) -> list[str]:
        lines = [str(self.preferences[p]) for p in PURPOSES if p in self.preferences]
        if self.tdm_policy:
            lines.append(f"tdm-policy: {self.tdm_policy}")
        lines += [f"unknown, no effect: {u} ({s})" for s in self.statements for u in s.unknown]
        lines += [f"not read: {s.error} ({s})" for s in self.statements if s.error]
        lines += list(self.notes)
        return lines

    def as_dict(self) -> dict[str, object]:
        """Plain data (JSON-ready), for logs, exports and the command line."""
        return {
            "url": self.url,
            "purposes": {p: self.state(p) for p in PURPOSES},
            "statements": [s.as_dict() for s in self.statements],
            "notes": list(self.notes),
            "tdm_policy": self.tdm_policy,
        }


# Structured-field dictionaries (RFC 9651 §3.2, parsed as §4.2.2 says).


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


def _statement(
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


# robots.txt rules (draft-ietf-aipref-attach §3).

_KINDS = {"content-usage": CONTENT_USAGE, "content-signal": CONTENT_SIGNAL}


def _split_path(value: str) -> tuple[str | None, str]:
    """attach §3.2: a value starting with ``/`` has a path up to the first SP or HTAB."""
    if not value.startswith("/"):
        return None, value
    cut = re.search(r"[ \t]", value)
    if cut is None:
        return value, ""
    return value[: cut.start()], value[cut.end() :].strip(" \t")


def _priority(path: str | None, target: str) -> int | None:
    """How long a match ``path`` is for the normalised ``target``; ``None``: no match.

    attach §3.1: the same longest-match as Allow and Disallow, length in
    octets of the encoded path. No path applies everywhere, as ``/``.
    """
    matcher = compile_matcher(path or "/")
    if matcher is None:
        return None
    if isinstance(matcher, Pattern):
        return matcher.priority if matcher.matches(target) else None
    return len(matcher) if target.startswith(matcher) else None


def robots_statements(robots: RobotsTxt, decision: Decision) -> tuple[list[Statement], list[str]]:
    """The Content-Usage and Content-Signal rules of the crawler's groups that apply to a URL.

    ``decision`` is the file's decision on that URL for this crawler. attach
    §3.1: preferences apply only where crawling is allowed; each kind's
    longest matching path wins, and rules with that same path all apply
    (combined as vocab §5.1). The two kinds are separate vocabularies: each
    has its own longest match.
    """
    notes: list[str] = []
    lines = robots.usage_lines
    if not lines:
        return [], notes
    if not decision.allowed:
        return [], [
            f"robots.txt disallows {decision.path}: no usage preferences apply (attach §3.1)"
        ]
    starts = [group.line for group in robots.groups]
    chosen = set(select([g.tokens for g in robots.groups], decision.agent, decision.agent_match))
    target = request_path(decision.url)
    best: dict[str, tuple[int, list[Statement]]] = {}
    outside = 0
    for line, key, value in lines:
        group = _group_of(starts, line)
        if group is None:
            outside += 1
            continue
        if group not in chosen:
            continue
        kind = _KINDS[key]
        path, preference = _split_path(value)
        priority = _priority(path, target)
        if priority is None:
            continue
        held = best.get(kind)
        statement = _statement(ROBOTS, kind, value, line=line, path=path, said=preference)
        if held is None or priority > held[0]:
            best[kind] = (priority, [statement])
        elif priority == held[0]:
            held[1].append(statement)
    if outside:
        notes.append(
            f"robots.txt: {outside} Content-Usage/Content-Signal lines before any User-agent"
            " line belong to no group: ignored"
        )
    found = [s for kind in (CONTENT_USAGE, CONTENT_SIGNAL) if kind in best for s in best[kind][1]]
    return found, notes


def _group_of(starts: Sequence[int], line: int) -> int | None:
    """Index of the group a line stands in: the last one starting at or before it."""
    found = None
    low, high = 0, len(starts)
    while low < high:
        middle = (low + high) // 2
        if starts[middle] <= line:
            found = middle
            low = middle + 1
        else:
            high = middle
    return found


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
        statements.append(_statement(HEADER, CONTENT_USAGE, ", ".join(usage), line=1))
    for number, value in enumerate(content_signal, 1):
        if number > MAX_HEADERS:
            break
        statements.append(_statement(HEADER, CONTENT_SIGNAL, _text(value), line=number))
    return statements


# The view.


def usage_view(
    url: str,
    statements: Sequence[Statement] = (),
    *,
    tdm: TdmRep | None = None,
    tdm_headers: tuple[Iterable[str | bytes], Iterable[str | bytes]] = ((), ()),
    metas: Iterable[tuple[str, str]] = (),
    notes: Sequence[str] = (),
) -> UsageView:
    """One URL's preferences from its statements (robots.txt rules, headers) and TDMRep.

    ``tdm`` is the origin's tdmrep.json as read, ``tdm_headers`` the
    ``tdm-reservation`` and ``tdm-policy`` header values, ``metas`` the
    page's ``(name, content)`` meta pairs.
    """
    from .tdmrep import tdm_statement

    all_notes = list(notes)
    tdm_found, policy, tdm_notes = tdm_statement(url, tdm, tdm_headers, metas)
    all_notes += tdm_notes
    preferences: dict[str, Preference] = {}
    for purpose in (TRAIN_AI, SEARCH, AI_INPUT):
        said = [s for s in statements if purpose in s.preferences]
        no = [s for s in said if not s.preferences[purpose]]
        if no:
            preferences[purpose] = Preference(purpose, DISALLOWED, tuple(no))
        elif said:
            preferences[purpose] = Preference(purpose, ALLOWED, tuple(said))
        else:
            preferences[purpose] = Preference(purpose)
    everything = list(statements)
    if tdm_found is not None and TDM in tdm_found.preferences:
        allowed = tdm_found.preferences[TDM]
        preferences[TDM] = Preference(TDM, ALLOWED if allowed else DISALLOWED, (tdm_found,))
        everything.append(tdm_found)
    else:
        preferences[TDM] = Preference(TDM)
        if tdm_found is not None:
            everything.append(tdm_found)
    return UsageView(url, preferences, tuple(everything), tuple(all_notes), policy)


USAGE_REFUSAL = "usage preferences refuse"
"""How a decision's note begins when robots.txt refuses a declared purpose."""


def refuse_purposes(robots: RobotsTxt, decision: Decision, purposes: Sequence[str]) -> Decision:
    """``decision`` itself, or a refusal when robots.txt refuses one of ``purposes`` for its URL."""
    statements, _ = robots_statements(robots, decision)
    if not statements:
        return decision
    refused = usage_view(decision.url, statements).refused(purposes)
    if not refused:
        return decision
    said = "; ".join(str(p) for p in refused)
    names = ", ".join(p.purpose for p in refused)
    return replace(decision, allowed=False, note=f"{USAGE_REFUSAL} {names}: {said}")
