"""Page-level robots directives: the ``X-Robots-Tag`` header and the robots ``meta`` tag.

No SPEC section (the SPEC is robots.txt's).

Read as Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag
specifications" describes them: a comma-separated list of rules,
case-insensitive; ``none`` is ``noindex, nofollow``; ``all`` is no
restriction; a header value may start with a crawler's name
(``examplebot: noindex``), a meta tag names its crawler in ``name``; several
headers and several tags add up, and where rules conflict the more
restrictive one applies. Crawler names are matched on the product token,
as robots.txt ``User-agent`` lines are (:mod:`..robots.agents`).

Every value is read (every ``X-Robots-Tag`` line the HTTP layer delivers,
every robots meta tag given), so no ``nofollow`` is lost among repeated
rules: the work follows the bytes of the headers and the head, what is kept
does not. Hostile input costs little: :data:`MAX_VALUE_CHARS` characters of
each value and :data:`MAX_ITEMS` rules per value are read; of the rules of
each kind (for this crawler, for another, unknown, malformed) the first
:data:`MAX_KEPT` are kept, and past them only a rule that changes what is in
effect, the others counted in a note; what is beyond is reported, never an
exception.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from scrapy_robotrules.engine.page.dates import parse_date
from scrapy_robotrules.engine.robots.agents import (
    TOKEN,
    WILDCARD,
    AgentMatch,
    group_token,
    product_token,
    select,
)

__all__ = [
    "HEADER",
    "META",
    "Directive",
    "PageDirectives",
    "Source",
    "parse_date",
    "parse_page_directives",
]

HEADER = "header"
META = "meta"

MAX_KEPT = 64
"""Rules kept of each kind per response, in reading order; past them, only a rule that
changes what is in effect (the first of its name, a more restrictive value)."""
_MAX_NAMES = 1024
"""Crawler names whose match is remembered while one response is read."""
MAX_VALUE_CHARS = 4096
"""Characters read of one header value or one ``content`` attribute."""
MAX_ITEMS = 64
"""Comma-separated rules read of one value."""

GENERIC_NAMES = frozenset({"robots", WILDCARD, ""})
"""Meta ``name`` (or header prefix) values that speak to every crawler."""

RESTRICTIONS = (
    "noindex",
    "nofollow",
    "noarchive",
    "nosnippet",
    "noimageindex",
    "noai",
    "noimageai",
    "notranslate",
    "indexifembedded",
)
"""Rules without a value that restrict (``indexifembedded`` is kept as data)."""
PERMISSIONS = ("all", "index", "follow")
"""Rules that restrict nothing; a restrictive rule elsewhere overrides them."""
VALUED = ("unavailable_after", "max-snippet", "max-image-preview", "max-video-preview")
KNOWN = frozenset((*RESTRICTIONS, *PERMISSIONS, "none", *VALUED))
_IMAGE_PREVIEWS = ("none", "standard", "large")
"""``max-image-preview`` values, most restrictive first."""
_OVERRIDES = {"all": ("noindex", "nofollow"), "index": ("noindex",), "follow": ("nofollow",)}
_PREFIX = re.compile(r"\s*([A-Za-z0-9_.*/-]+)\s*:\s*(([A-Za-z_-]+).*)", re.DOTALL)
"""``bot: rule``: a crawler's name, when the name is no rule and a known rule follows."""
_WEEKDAY_CUT = re.compile(
    r"unavailable_after\s*:\s*(?:mon|tue|wed|thu|fri|sat|sun)"
    r"(?:day|sday|nesday|rsday|urday)?\s*$",
    re.IGNORECASE,
)
"""A rule cut by the comma after a weekday: ``unavailable_after: Tue, 25 May 2010 ...``."""


@dataclass(frozen=True)
class Source:
    """Where rules were read: the n-th ``X-Robots-Tag`` header or robots meta tag."""

    kind: str
    """:data:`HEADER` or :data:`META`."""
    number: int
    """1-based, counted among the values of its kind."""
    value: str
    """The value as read (at most :data:`MAX_VALUE_CHARS` characters)."""
    name: str = ""
    """The meta tag's ``name`` (empty for headers)."""

    def __str__(self) -> str:
        if self.kind == HEADER:
            return f"X-Robots-Tag header {self.number}: {self.value!r}"
        return f'<meta name="{self.name}"> {self.number}: {self.value!r}'


@dataclass(frozen=True)
class Directive:
    """One rule as read: its name, its value (valued rules), its crawler, its source."""

    name: str
    """Lower-case: ``noindex``, ``max-snippet``, or an unknown token as written, lowered."""
    value: str | None
    """What follows the colon, stripped; ``None`` for rules without one."""
    scope: str
    """The crawler it names as written (``ExampleBot``); empty for every crawler."""
    source: Source

    def __str__(self) -> str:
        rule = self.name if self.value is None else f"{self.name}: {self.value}"
        who = f"for {self.scope}" if self.scope else "for every crawler"
        return f"{rule} ({who}; {self.source})"


@dataclass(frozen=True)
class PageDirectives:
    """The rules of one response that apply to one crawler, and why.

    ``applied`` holds every rule for this crawler (generic and specific) in
    reading order: headers first, then meta tags. The fields below it are
    their combined meaning, the most restrictive reading of each.
    """

    agent: str
    """The crawler's product token."""
    applied: tuple[Directive, ...] = ()
    other_crawlers: tuple[Directive, ...] = ()
    """Rules naming another crawler: not applied, reported."""
    unknown: tuple[Directive, ...] = ()
    """Rules this package does not know, for this crawler: kept and reported, no effect."""
    malformed: tuple[Directive, ...] = ()
    """Known rules with an unusable value (a date that is none): ignored, reported."""
    truncated: tuple[str, ...] = ()
    """What was left unread because of the caps, one line each."""
    notes: tuple[str, ...] = ()
    """What was read and is not listed (rules past :data:`MAX_KEPT` that change nothing)."""
    restrictions: frozenset[str] = frozenset()
    """Of :data:`RESTRICTIONS`, those in effect (``none`` counted as both of its)."""
    unavailable_after: datetime | None = None
    """The earliest valid ``unavailable_after`` date, in UTC."""
    max_snippet: int | None = None
    """Characters; ``-1`` no limit, ``0`` none (``nosnippet`` makes it ``0``)."""
    max_image_preview: str | None = None
    max_video_preview: int | None = None
    """Seconds; ``-1`` no limit, ``0`` a still image only."""
    _by_name: dict[str, tuple[Directive, ...]] = field(
        default_factory=dict, repr=False, hash=False, compare=False
    )

    @property
    def noindex(self) -> bool:
        return "noindex" in self.restrictions

    @property
    def nofollow(self) -> bool:
        return "nofollow" in self.restrictions

    def expired(self, now: datetime | None = None) -> bool:
        """Whether ``unavailable_after`` has passed at ``now`` (default: now)."""
        if self.unavailable_after is None:
            return False
        return self.unavailable_after <= (now or datetime.now(timezone.utc))

    def excluded(self, now: datetime | None = None) -> bool:
        """``noindex``, or ``unavailable_after`` in the past: not to be indexed."""
        return self.noindex or self.expired(now)

    @property
    def in_effect(self) -> tuple[str, ...]:
        """Names of the rules in effect, restrictions first, for stats and logs."""
        names = [name for name in RESTRICTIONS if name in self.restrictions]
        names += [name for name, value in self._values().items() if value is not None]
        return tuple(names)

    def _values(self) -> dict[str, object]:
        return {
            "unavailable_after": self.unavailable_after,
            "max-snippet": self.max_snippet,
            "max-image-preview": self.max_image_preview,
            "max-video-preview": self.max_video_preview,
        }

    def sources(self, name: str) -> tuple[Directive, ...]:
        """The rules read that give ``name`` (``none`` gives ``noindex`` and ``nofollow``)."""
        return self._by_name.get(name, ())

    def explain(self, now: datetime | None = None) -> list[str]:
        """One line per rule in effect with where it came from, then what had no effect."""
        lines: list[str] = []
        for name in self.in_effect:
            value = self._effective_value(name)
            label = name if value is None else f"{name}: {value}"
            if name == "unavailable_after":
                label += " (passed)" if self.expired(now) else " (not yet)"
            lines.append(f"{label} <- " + "; ".join(str(d) for d in self.sources(name)))
        for name, restrictions in _OVERRIDES.items():
            overridden = [r for r in restrictions if r in self.restrictions]
            said = " and ".join(overridden)
            lines += [
                f"overridden by {said}, the more restrictive: {d}" if said else f"no effect: {d}"
                for d in self.sources(name)
            ]
        lines += [f"not for this crawler: {d}" for d in self.other_crawlers]
        lines += [f"unknown, no effect: {d}" for d in self.unknown]
        lines += [f"malformed, ignored: {d}" for d in self.malformed]
        lines += [f"not read: {note}" for note in self.truncated]
        lines += list(self.notes)
        return lines

    def _effective_value(self, name: str) -> str | None:
        value = self._values().get(name)
        if isinstance(value, datetime):
            return value.isoformat()
        return None if value is None else str(value)


def _split(value: str) -> list[str]:
    """Comma-separated rules; a comma after a weekday in a date joins the date again."""
    items: list[str] = []
    for part in value.split(","):
        if items and _WEEKDAY_CUT.search(items[-1]):
            items[-1] = f"{items[-1]},{part}"
        else:
            items.append(part)
    return items


def _items(value: str, scope: str) -> Iterable[tuple[str, str, str | None]]:
    """``(scope, name, value)`` of each rule; ``bot: rule`` switches the scope from there on.

    ``future-rule: 3`` is an unknown rule with a value, not a crawler's name.
    """
    for raw in _split(value)[:MAX_ITEMS]:
        item = raw
        while (
            (prefix := _PREFIX.fullmatch(item))
            and prefix[1].lower() not in KNOWN
            and prefix[3].lower() in KNOWN
        ):
            scope, item = prefix[1], prefix[2]
        name, colon, rest = item.partition(":")
        name = name.strip().lower()
        if name:
            yield scope, name, rest.strip() if colon else None


def _number(value: str | None) -> int | None:
    text = (value or "").strip()
    if not re.fullmatch(r"-?[0-9]{1,9}", text):
        return None
    number = int(text)
    return number if number >= -1 else None


def _most_restrictive(numbers: Iterable[int]) -> int | None:
    """The smallest limit; ``-1`` (no limit) only when every value is ``-1``."""
    limits = list(numbers)
    if not limits:
        return None
    bounded = [n for n in limits if n >= 0]
    return min(bounded) if bounded else -1


class _Reader:
    """Sorts each rule read: for this crawler, for another, unknown or malformed.

    Each kind keeps its first :data:`MAX_KEPT` rules. Past them a rule for
    this crawler is kept only while it decides its name (the first of it, or
    the most restrictive value so far, :func:`_rank`), so that the rules
    kept mean what all the rules read mean; the others are counted.
    """

    def __init__(self, agent: str, agent_match: AgentMatch) -> None:
        self.agent = agent
        self.agent_match = agent_match
        self.applied: list[Directive] = []
        self.other: list[Directive] = []
        self.unknown: list[Directive] = []
        self.malformed: list[Directive] = []
        self.truncated: list[str] = []
        self.cut_values = 0
        """Values of more than :data:`MAX_ITEMS` rules (the first :data:`MAX_KEPT` named)."""
        self.read_count = {"applied": 0, "other": 0, "unknown": 0, "malformed": 0}
        self._deciding: dict[str, tuple[float, int, Directive]] = {}
        """Name -> (rank, reading order, rule) of the rule that decides it so far."""
        self._matches: dict[str, bool] = {}

    def for_us(self, scope: str) -> bool:
        key = scope.lower()
        if key in GENERIC_NAMES:
            return True
        found = self._matches.get(key)
        if found is None:
            found = bool(select(((group_token(key),),), self.agent, self.agent_match))
            if len(self._matches) < _MAX_NAMES:
                self._matches[key] = found
        return found

    def read(self, source: Source, scope: str, *, known_only: bool = False) -> bool:
        """Sort the rules of ``source``; with ``known_only``, only if all are known rules."""
        rules = [Directive(n, v, s, source) for s, n, v in _items(source.value, scope)]
        if known_only and not (rules and all(rule.name in KNOWN for rule in rules)):
            return False  # <meta name="description" content="...">: not robots rules
        if len(_split(source.value)) > MAX_ITEMS:
            self.cut_values += 1
            if len(self.truncated) < MAX_KEPT:
                self.truncated.append(f"rules after the first {MAX_ITEMS} of {source}")
        for rule in rules:
            if not self.for_us(rule.scope):
                self._keep("other", self.other, rule)
            elif rule.name not in KNOWN:
                self._keep("unknown", self.unknown, rule)
            elif not _valid(rule):
                self._keep("malformed", self.malformed, rule)
            else:
                self._apply(rule)
        return True

    def _keep(self, kind: str, kept: list[Directive], rule: Directive) -> None:
        self.read_count[kind] += 1
        if len(kept) < MAX_KEPT:
            kept.append(rule)

    def _apply(self, rule: Directive) -> None:
        order = self.read_count["applied"]
        self.read_count["applied"] += 1
        rank = _rank(rule)
        deciding = self._deciding.get(rule.name)
        decides = deciding is None or rank < deciding[0]
        if decides:
            self._deciding[rule.name] = (rank, order, rule)
        if len(self.applied) < MAX_KEPT:
            self.applied.append(rule)

    def kept_applied(self) -> list[Directive]:
        """The first :data:`MAX_KEPT` rules for this crawler and, past them, those deciding."""
        later = sorted(
            (order, rule) for _, order, rule in self._deciding.values() if order >= MAX_KEPT
        )
        return [*self.applied, *(rule for _, rule in later)]

    def notes(self, kept: int) -> list[str]:
        """How many rules of each kind were read and are not listed."""
        listed = {
            "applied": kept,
            "other": len(self.other),
            "unknown": len(self.unknown),
            "malformed": len(self.malformed),
        }
        what = {
            "applied": "rules for this crawler that change nothing in effect",
            "other": "rules for other crawlers",
            "unknown": "unknown rules",
            "malformed": "malformed rules",
        }
        return [
            f"read, not listed: {self.read_count[kind] - listed[kind]:,} {what[kind]}"
            f" past the first {MAX_KEPT}"
            for kind in what
            if self.read_count[kind] > listed[kind]
        ]


def _rank(rule: Directive) -> float:
    """How restrictive a rule's value is, lower first; rules without a value rank alike (the
    first read decides)."""
    if rule.name == "unavailable_after":
        date = parse_date(rule.value or "")
        return date.timestamp() if date is not None else math.inf
    if rule.name in ("max-snippet", "max-video-preview"):
        number = _number(rule.value)
        return math.inf if number is None or number < 0 else number
    if rule.name == "max-image-preview":
        return _IMAGE_PREVIEWS.index((rule.value or "").lower())
    return 0.0


def _valid(rule: Directive) -> bool:
    if rule.name == "unavailable_after":
        return parse_date(rule.value or "") is not None
    if rule.name in ("max-snippet", "max-video-preview"):
        return _number(rule.value) is not None
    if rule.name == "max-image-preview":
        return (rule.value or "").lower() in _IMAGE_PREVIEWS
    return True


def _capped(value: str | bytes) -> str:
    if isinstance(value, bytes):
        return value[:MAX_VALUE_CHARS].decode("latin-1")
    return value[:MAX_VALUE_CHARS]


def parse_page_directives(
    headers: Iterable[str | bytes] = (),
    metas: Iterable[tuple[str, str]] = (),
    agent: str = WILDCARD,
    agent_match: AgentMatch = TOKEN,
) -> PageDirectives:
    """The rules for ``agent`` in ``X-Robots-Tag`` values and ``(name, content)`` meta pairs.

    ``metas`` may hold every meta tag of a page: those named ``robots`` or
    after this crawler are read; one named after another crawler is
    reported only if its content is robots rules.
    """
    reader = _Reader(agent, agent_match)
    for number, value in enumerate(headers, 1):
        reader.read(Source(HEADER, number, _capped(value)), "")
    number = 0
    for written, content in metas:
        name = written.strip()
        generic = name.lower() in GENERIC_NAMES
        source = Source(META, number + 1, _capped(content), name)
        if generic or reader.for_us(name):
            reader.read(source, "" if generic else name)
        elif not reader.read(source, name, known_only=True):
            continue
        number += 1
    return _combine(reader)


def _combine(reader: _Reader) -> PageDirectives:
    applied = reader.kept_applied()
    by_name: dict[str, list[Directive]] = {}
    for rule in applied:
        names = ("noindex", "nofollow") if rule.name == "none" else (rule.name,)
        for name in names:
            by_name.setdefault(name, []).append(rule)
    restrictions = frozenset(name for name in RESTRICTIONS if name in by_name)

    def values(name: str) -> list[str]:
        return [rule.value or "" for rule in by_name.get(name, ())]

    if reader.cut_values > len(reader.truncated):
        more = reader.cut_values - len(reader.truncated)
        reader.truncated.append(f"rules after the first {MAX_ITEMS} of {more:,} more values")
    dates = [d for d in map(parse_date, values("unavailable_after")) if d is not None]
    max_snippet = _most_restrictive(n for n in map(_number, values("max-snippet")) if n is not None)
    if "nosnippet" in restrictions:
        max_snippet = 0
        by_name["max-snippet"] = [*by_name.get("max-snippet", ()), *by_name["nosnippet"]]
    previews = [v.lower() for v in values("max-image-preview")]
    video = (n for n in map(_number, values("max-video-preview")) if n is not None)
    return PageDirectives(
        agent=product_token(reader.agent),
        applied=tuple(applied),
        other_crawlers=tuple(reader.other),
        unknown=tuple(reader.unknown),
        malformed=tuple(reader.malformed),
        truncated=tuple(reader.truncated),
        notes=tuple(reader.notes(len(applied))),
        restrictions=restrictions,
        unavailable_after=min(dates) if dates else None,
        max_snippet=max_snippet,
        max_image_preview=min(previews, key=_IMAGE_PREVIEWS.index) if previews else None,
        max_video_preview=_most_restrictive(video),
        _by_name={name: tuple(rules) for name, rules in by_name.items()},
    )
