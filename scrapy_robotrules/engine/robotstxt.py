"""A parsed robots.txt file: decisions for any agent and mode, each one explainable.

Parsing only finds the groups (see :mod:`.reading`); a group's rules are read
and compiled when a crawler first needs them, and the compiled index is kept
per (agent, precedence, agent_match), so a file asked the same question
again answers from a dict lookup, a normalised path and a bisect.
"""

from __future__ import annotations

import functools
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter
from typing import NamedTuple
from urllib.parse import urljoin

from .agents import TOKEN, check_agent_match, group_token, product_token, select
from .directives import (
    RequestRate,
    UtcWindow,
    parse_crawl_delay,
    parse_request_rate,
    parse_window,
)
from .index import RuleIndex, StarRules, WildRule
from .patterns import Pattern, compile_matcher, resolve_value
from .precedence import (
    MOST_SPECIFIC,
    NO_RULE,
    PlainRules,
    Rule,
    code_line,
    rule_code,
    strategy_for,
)
from .reading import (
    DEFAULT_MAX_SIZE,
    KEY_NAMES,
    RawGroup,
    count_unknown,
    decode_value,
    extra_items,
    line_starts,
    member_items,
    member_line,
    read_bytes,
    read_layout,
    usage_lines,
)
from .urls import request_path

__all__ = ["AgentLine", "Decision", "Group", "RobotsTxt", "Rule", "is_robots_path"]

_ROBOTS_PATH = "/robots.txt"
_ABSOLUTE_HTTP = re.compile(r"https?://", re.IGNORECASE)
_MAX_VIEWS = 64
_MAX_SHOWN = 32
_KEYS: dict[tuple[str, str, str], tuple[str, str, str]] = {}
WEIGHT_BASE = 2048
WEIGHT_PER_BYTE = 20


class AgentLine(NamedTuple):
    """A ``User-agent`` line: its value as written and its line number."""

    value: str
    line: int


_FIRST, _SECOND = itemgetter(0), itemgetter(1)
# The spellings nearly every file uses, looked up as written.
_COMMON_KEYS = {
    spelling.encode(): KEY_NAMES[spelling.lower()]
    for spelling in ("Disallow", "Allow", "disallow", "allow", "DISALLOW", "ALLOW")
}


class _Rules(NamedTuple):
    """A group's rules as read: what an index is built from, then dropped."""

    allow: PlainRules
    disallow: PlainRules
    wild: list[WildRule]
    stars: StarRules


def _rule_pattern(written: str, robots_url: str | None) -> str | Pattern | None:
    """A rule value's matcher (``None``: the rule is ignored), as :func:`compile_matcher` says."""
    resolved = resolve_value(written, robots_url)
    return None if resolved is None else compile_matcher(resolved)


def _read_rules(raw: RawGroup, robots_url: str | None) -> _Rules:
    # The hot loop of a first question to a large file: plain values used
    # as they are when they need no normalising, and sorted by kind as they
    # come, in C (compress); only the other member lines go through Python.
    items = member_items(raw.body)
    lines = range(raw.body_line, raw.body_line + len(items))
    if not items:
        return _Rules(([], []), ([], []), [], StarRules([], [], [], [], [], []))
    # One pass turns the rows into columns.
    (disallows, allows, star_keys, prefixes, stars, pieces, anchors, keys, values, values2) = zip(
        *items, strict=True
    )
    # Rule codes (line * 2 + allow) straight from ranges, in C.
    first, end = raw.body_line * 2, (raw.body_line + len(items)) * 2
    disallow_values = list(compress(disallows, disallows))
    disallow_codes: list[int] = list(compress(range(first, end, 2), disallows))
    allow_values = list(compress(allows, allows))
    allow_codes: list[int] = list(compress(range(first + 1, end, 2), allows))
    wild: list[WildRule] = []
    starred = StarRules(
        list(compress(lines, star_keys)),
        [key[:1] in b"aA" for key in compress(star_keys, star_keys)],
        list(compress(prefixes, star_keys)),
        list(compress(stars, star_keys)),
        list(compress(pieces, star_keys)),
        list(compress(anchors, star_keys)),
    )
    others = list(
        zip(
            compress(lines, keys),
            compress(keys, keys),
            compress(values, keys),
            compress(values2, keys),
            strict=True,
        )
    )
    read_apart = False
    for line, key, value, value2 in others:
        name = _COMMON_KEYS.get(key) or KEY_NAMES[key.decode("ascii").lower()]
        if name not in ("disallow", "allow"):
            continue  # Crawl-delay and the like: see _Extras.
        written = decode_value(value or value2)
        if not written:
            continue  # SPEC 4: an empty value is no rule at all.
        # A value that can never match (SPEC 4) is no matcher: it can never
        # decide, so explain() never has to name it.
        matcher = _rule_pattern(written, robots_url)
        if matcher is None:
            continue
        allow = name == "allow"
        if isinstance(matcher, str):
            read_apart = True
            prefix = matcher.encode()  # normalised: ASCII
            if allow:
                allow_values.append(prefix)
                allow_codes.append(rule_code(line, allow))
            else:
                disallow_values.append(prefix)
                disallow_codes.append(rule_code(line, allow))
        else:
            wild.append((line, allow, matcher))
    if read_apart:
        # Rules read one by one came after the regex-built ones: restore
        # file order, which ranks and ties depend on.
        allow_codes, allow_values = _in_file_order(allow_codes, allow_values)
        disallow_codes, disallow_values = _in_file_order(disallow_codes, disallow_values)
    return _Rules((allow_values, allow_codes), (disallow_values, disallow_codes), wild, starred)


def _in_file_order(codes: list[int], values: list[bytes]) -> tuple[list[int], list[bytes]]:
    pairs = sorted(zip(codes, values, strict=True))
    return list(map(_FIRST, pairs)), list(map(_SECOND, pairs))


class _Extras:
    """A group's Crawl-delay, Request-rate and Visit-time lines, read."""

    __slots__ = ("crawl_delay", "request_rates", "visit_times")

    def __init__(self, raw: RawGroup) -> None:
        self.crawl_delay: float | None = None
        self.request_rates: list[RequestRate] = []
        self.visit_times: list[UtcWindow] = []
        for key, written in extra_items(raw.body):
            name = KEY_NAMES[key.lower()]
            if name == "crawl-delay":
                delay = parse_crawl_delay(written)
                if delay is not None and (self.crawl_delay is None or delay > self.crawl_delay):
                    self.crawl_delay = delay
            elif name == "request-rate":
                rate = parse_request_rate(written)
                if rate is not None:
                    self.request_rates.append(rate)
            elif name == "visit-time":
                window = parse_window(written)
                if window is not None:
                    self.visit_times.append(window)


class Group:
    """One group: its ``User-agent`` lines, and its members, read on first use.

    The rules are read into an index (see :class:`.RuleIndex`), which keeps
    each rule's line number, not its text: the text is read again from the
    group when a rule must be shown or re-compiled.
    """

    __slots__ = ("_extras", "_raw", "_starts", "tokens")

    def __init__(self, raw: RawGroup) -> None:
        self._raw = raw
        self.tokens: tuple[str, ...] = tuple([group_token(value) for value, _ in raw.agents])
        self._extras: _Extras | None = None
        self._starts: array[int] | None = None

    @property
    def user_agents(self) -> tuple[AgentLine, ...]:
        """The group's ``User-agent`` lines: value as written, line number."""
        return tuple(AgentLine(value, line) for value, line in self._raw.agents)

    @property
    def line(self) -> int:
        """Line of the group's first ``User-agent``."""
        return self._raw.agents[0][1]

    def unknown_lines(self) -> int:
        return count_unknown(self._raw.body)

    def rules(self, robots_url: str | None) -> _Rules:
        return _read_rules(self._raw, robots_url)

    def extras(self) -> _Extras:
        if self._extras is None:
            self._extras = _Extras(self._raw)
        return self._extras

    def holds(self, line: int) -> bool:
        """Whether ``line`` is one of the group's member lines."""
        raw = self._raw
        return raw.body_line <= line < raw.body_line + raw.body.count(b"\n")

    def member(self, line: int, *, keep: bool = False) -> tuple[str, str]:
        """(directive, value as written) of the member at ``line``.

        ``keep``: remember where lines start, for a caller that reads many
        (a large set of wildcard rules read back one by one).
        """
        raw = self._raw
        starts = self._starts
        if starts is None:
            starts = line_starts(raw.body)
            if keep:
                self._starts = starts
        found = member_line(raw.body, starts[line - raw.body_line])
        if found is None:
            raise LookupError(f"no member at line {line}")
        key, value = found
        return KEY_NAMES[key.lower()], value

    def __repr__(self) -> str:
        return f"<Group {self}>"

    def __str__(self) -> str:
        agents = ", ".join(f"User-agent: {value}" for value, _ in self._raw.agents)
        return f"{agents} (line {self.line})"


@dataclass(frozen=True)
class Decision:
    """Why a URL is allowed or not: the deciding rule, the groups that applied, the mode."""

    allowed: bool
    rule: Rule | None
    groups: list[Group]
    url: str
    path: str
    agent: str
    precedence: str
    agent_match: str
    note: str = ""
    """Set when no file decided: why the origin is allowed or disallowed as a whole."""

    @classmethod
    def without_rules(
        cls, url: str, agent: str, precedence: str, agent_match: str, *, allowed: bool, note: str
    ) -> Decision:
        """A decision on an origin as a whole (no robots.txt, or none reachable)."""
        return cls(allowed, None, [], url, request_path(url), agent, precedence, agent_match, note)

    @property
    def reason(self) -> str:
        """One line a person can read."""
        verdict = "allowed" if self.allowed else "disallowed"
        if self.note:
            return f"{verdict}: {self.note}"
        if self.rule is not None:
            return f"{verdict} by {self.rule}"
        if is_robots_path(self.path):
            return f"{verdict}: /robots.txt itself is always allowed"
        if not self.groups:
            return f"{verdict}: no group applies to {product_token(self.agent) or '(empty)'!r}"
        groups = "; ".join(str(g) for g in self.groups)
        return f"{verdict}: no rule matches in {groups}"

    def __str__(self) -> str:
        return self.reason


def is_robots_path(path: str) -> bool:
    return path.startswith(_ROBOTS_PATH) and (
        len(path) == len(_ROBOTS_PATH) or path[len(_ROBOTS_PATH)] == "?"
    )


class RobotsTxt:
    """A robots.txt file, parsed. Build one with :meth:`parse`."""

    __slots__ = (
        "_shown",
        "_unknown_lines",
        "_views",
        "groups",
        "host",
        "sitemaps",
        "size",
        "truncated",
        "url",
        "usage_lines",
    )

    def __init__(
        self,
        groups: Sequence[RawGroup] = (),
        *,
        url: str | None = None,
        sitemaps: Sequence[str] = (),
        host: str | None = None,
        truncated: bool = False,
        unknown_lines: int = 0,
        size: int = 0,
        usage: Sequence[tuple[int, str, str]] = (),
    ) -> None:
        self.url = url
        self.usage_lines: tuple[tuple[int, str, str], ...] = tuple(usage)
        """``Content-Usage`` and ``Content-Signal`` lines: (line, key, value); see :mod:`.usage`."""
        self.size = size
        """Bytes of the file that were read (after the size limit)."""
        self.groups: tuple[Group, ...] = tuple(Group(raw) for raw in groups)
        self.sitemaps: list[str] = list(sitemaps)
        self.host = host
        self.truncated = truncated
        self._unknown_lines = unknown_lines
        self._views: dict[tuple[str, str, str], RuleIndex] = {}
        self._shown: dict[int, Rule] | None = None

    @classmethod
    def parse(
        cls, content: str | bytes, url: str | None = None, *, max_size: int = DEFAULT_MAX_SIZE
    ) -> RobotsTxt:
        """Parse ``content``, a robots.txt fetched from ``url`` (if known).

        Never raises on content: anything that is not robots.txt syntax is
        ignored, so an HTML page or binary noise yields a file with no groups
        (everything allowed), as RFC 9309 prescribes for unparseable lines.
        """
        data, truncated = read_bytes(content, max_size)
        layout = read_layout(data)
        sitemaps = layout.sitemaps
        if url is not None:
            sitemaps = _resolve_sitemaps(sitemaps, url)
        return cls(
            layout.groups,
            url=url,
            sitemaps=sitemaps,
            host=layout.host,
            truncated=truncated,
            unknown_lines=layout.unknown_lines,
            size=len(data),
            usage=usage_lines(data),
        )

    def __repr__(self) -> str:
        return f"<RobotsTxt {self.url or '(no url)'}: {len(self.groups)} groups>"

    @property
    def weight(self) -> int:
        """Bytes of memory this file may hold once its rules are compiled: an upper estimate.

        Rules are read and compiled on first use, so the estimate goes by the
        file's size: measured, a file holds one to four times its size on
        ordinary sites, twelve on a file of a thousand one-line groups, and
        eleven to eighteen on a file of nothing but wildcard rules (most of
        it their automaton, outside Python's objects), plus a kilobyte or
        two of fixed cost.
        """
        return WEIGHT_BASE + WEIGHT_PER_BYTE * self.size

    @property
    def unknown_lines(self) -> int:
        """Lines with content but no known directive: many suggest this is no robots.txt."""
        return self._unknown_lines + sum(g.unknown_lines() for g in self.groups)

    # Deciding.

    def _selected(self, agent: str, agent_match: str) -> tuple[int, ...]:
        return select([g.tokens for g in self.groups], agent, check_agent_match(agent_match))

    def _index(self, agent: str, precedence: str, agent_match: str) -> RuleIndex:
        key = (agent, precedence, agent_match)
        index = self._views.get(key)
        if index is not None:
            return index
        # Every file asked by the same crawler holds the same key: one tuple.
        if len(_KEYS) >= _MAX_VIEWS:
            _KEYS.clear()
        key = _KEYS.setdefault(key, key)
        strategy = strategy_for(precedence)
        chosen = self._selected(agent, agent_match)
        # Agents that select the same groups share one index.
        index = next((i for i in self._views.values() if i.key == (chosen, precedence)), None)
        if index is None:
            groups = [self.groups[i] for i in chosen]
            read = [g.rules(self.url) for g in groups]
            wild = read[0].wild if len(read) == 1 else [w for r in read for w in r.wild]
            index = RuleIndex(
                [r.allow for r in read],
                [r.disallow for r in read],
                wild,
                [r.stars for r in read],
                strategy,
                pattern_at=functools.partial(self._pattern_at, groups),
                key=(chosen, precedence),
            )
        if len(self._views) >= _MAX_VIEWS:
            self._views.clear()  # Bound the memory of callers that vary the agent.
        self._views[key] = index
        return index

    def allowed(
        self,
        url: str,
        agent: str,
        precedence: str = MOST_SPECIFIC,
        agent_match: str = TOKEN,
    ) -> bool:
        """Whether ``agent`` may fetch ``url`` (absolute, or a bare path)."""
        index = self._views.get((agent, precedence, agent_match))
        if index is None:
            index = self._index(agent, precedence, agent_match)
        path = request_path(url)
        if path.startswith(_ROBOTS_PATH) and is_robots_path(path):
            return True
        found = index.decide(path)
        return found == NO_RULE or found & 1 == 1  # code_allows, inlined: the hot path

    def explain(
        self,
        url: str,
        agent: str,
        precedence: str = MOST_SPECIFIC,
        agent_match: str = TOKEN,
    ) -> Decision:
        """The decision for ``url`` with the rule and groups behind it."""
        index = self._index(agent, precedence, agent_match)
        groups = [self.groups[i] for i in self._selected(agent, agent_match)]
        path = request_path(url)
        found = NO_RULE if is_robots_path(path) else index.decide(path)
        rule = None if found == NO_RULE else self._rule(groups, code_line(found))
        allowed = rule is None or rule.allow
        return Decision(allowed, rule, groups, url, path, agent, precedence, agent_match)

    def _rule(self, groups: Sequence[Group], line: int) -> Rule:
        """The rule at ``line``, read again from its group (a scan of the group's text).

        A crawler asks for an explanation of every request, and a site's
        requests are decided by a few rules again and again: the last rules
        read are kept.
        """
        shown = self._shown
        if shown is None:
            shown = self._shown = {}
        rule = shown.get(line)
        if rule is None:
            group = next(g for g in groups if g.holds(line))
            directive, written = group.member(line)
            rule = Rule(directive, written, line)
            if len(shown) >= _MAX_SHOWN:
                shown.clear()
            shown[line] = rule
        return rule

    def _pattern_at(self, groups: Sequence[Group], line: int) -> Pattern:
        """The wildcard pattern of the rule at ``line``, read again from its group."""
        group = next(g for g in groups if g.holds(line))
        matcher = _rule_pattern(group.member(line, keep=True)[1], self.url)
        if not isinstance(matcher, Pattern):
            raise LookupError(f"no wildcard rule at line {line}")
        return matcher

    # Politeness.

    def _extras(self, agent: str, agent_match: str) -> list[_Extras]:
        return [self.groups[i].extras() for i in self._selected(agent, agent_match)]

    def crawl_delay(self, agent: str, agent_match: str = TOKEN) -> float | None:
        """Seconds between requests asked of ``agent``; the largest of merged groups."""
        delays = [m.crawl_delay for m in self._extras(agent, agent_match)]
        known = [d for d in delays if d is not None]
        return max(known) if known else None

    def request_rate(self, agent: str, agent_match: str = TOKEN) -> RequestRate | None:
        """The most restrictive ``Request-rate`` for ``agent`` (longest delay), if any."""
        rates = [r for m in self._extras(agent, agent_match) for r in m.request_rates]
        return max(rates, key=lambda r: r.delay) if rates else None

    def visit_time(self, agent: str, agent_match: str = TOKEN) -> list[UtcWindow]:
        """UTC windows in which ``agent`` is welcome; empty means any time."""
        return [w for m in self._extras(agent, agent_match) for w in m.visit_times]


def _resolve_sitemaps(sitemaps: list[str], robots_url: str) -> list[str]:
    if all(map(_ABSOLUTE_HTTP.match, sitemaps)):
        return sitemaps
    resolved: dict[str, None] = {}  # ordered, without duplicates
    for sitemap in sitemaps:
        try:
            resolved[urljoin(robots_url, sitemap)] = None
        except ValueError:
            resolved[sitemap] = None
    return list(resolved)
