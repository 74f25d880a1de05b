"""A parsed robots.txt file: decisions for any agent and mode, each one explainable.

Parsing only finds the groups (see :mod:`.reading`); a group's rules are read
and compiled when a crawler first needs them, and the compiled index is kept
per (agent, precedence, agent_match), so a file asked the same question
again answers from a dict lookup, a normalised path and a bisect.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, repeat
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
from .patterns import Pattern, compile_matcher, resolve_value
from .precedence import MOST_SPECIFIC, Rule, RuleIndex, RuleRecord, as_rule, check_precedence
from .reading import (
    BLANKS,
    DEFAULT_MAX_SIZE,
    KEY_NAMES,
    RawGroup,
    count_unknown,
    member_items,
    read_bytes,
    read_layout,
    usage_lines,
)
from .urls import request_path

__all__ = ["AgentLine", "Decision", "Group", "RobotsTxt", "Rule", "is_robots_path"]

_ROBOTS_PATH = "/robots.txt"
_ABSOLUTE_HTTP = re.compile(r"https?://", re.IGNORECASE)
_MAX_VIEWS = 64
WEIGHT_BASE = 2048
WEIGHT_PER_BYTE = 32


class AgentLine(NamedTuple):
    """A ``User-agent`` line: its value as written and its line number."""

    value: str
    line: int


_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)
# The spellings nearly every file uses, looked up as written.
_COMMON_KEYS = {
    spelling: KEY_NAMES[spelling.lower()]
    for spelling in ("Disallow", "Allow", "disallow", "allow", "DISALLOW", "ALLOW")
}


class _Members:
    """A group's member lines, read."""

    __slots__ = (
        "crawl_delay",
        "plain_allow",
        "plain_disallow",
        "request_rates",
        "visit_times",
        "wild",
    )

    def __init__(self, raw: RawGroup, robots_url: str | None) -> None:
        # The hot loop of a first question to a large file: one tuple per
        # rule, plain values used as they are when they need no normalising,
        # and rules sorted by kind as they come.
        self.wild: list[tuple[RuleRecord, Pattern]] = []
        self.crawl_delay: float | None = None
        self.request_rates: list[RequestRate] = []
        self.visit_times: list[UtcWindow] = []
        items = member_items(raw.body)
        # Plain rules straight from the regex, assembled in C (compress, zip);
        # only the other member lines go through Python one by one.
        lines = range(raw.body_line, raw.body_line + len(items))
        disallows = list(map(_FIRST, items))
        disallowed = list(compress(disallows, disallows))
        plain_disallow = list(
            zip(compress(lines, disallows), repeat(False), disallowed, disallowed, strict=False)
        )
        allows = list(map(_SECOND, items))
        allowed = list(compress(allows, allows))
        plain_allow = list(
            zip(compress(lines, allows), repeat(True), allowed, allowed, strict=False)
        )
        keys = list(map(_THIRD, items))
        others = [
            (line, key, value or value2)
            for line, (_, _, key, value, value2) in zip(
                compress(lines, keys), compress(items, keys), strict=True
            )
        ]
        for line, key, value in others:
            name = _COMMON_KEYS.get(key) or KEY_NAMES[key.lower()]
            written = value.rstrip(BLANKS)
            if name in ("disallow", "allow"):
                if not written:
                    continue  # SPEC 4: an empty value is no rule at all.
                allow = name == "allow"
                resolved = resolve_value(written, robots_url)
                if resolved is None:
                    continue
                # A value that can never match (SPEC 4) is no matcher: it
                # can never decide, so explain() never has to name it.
                matcher = compile_matcher(resolved)
                if matcher is None:
                    continue
                if isinstance(matcher, str):
                    (plain_allow if allow else plain_disallow).append(
                        (line, allow, written, matcher)
                    )
                else:
                    self.wild.append(((line, allow, written, matcher), matcher))
                continue
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
        if others:
            # Rules read one by one came after the regex-built ones: restore
            # file order, which ranks and ties depend on.
            plain_allow.sort()
            plain_disallow.sort()
        self.plain_allow = plain_allow
        self.plain_disallow = plain_disallow


class Group:
    """One group: its ``User-agent`` lines, and its members, read on first use."""

    __slots__ = ("_members", "_raw", "tokens")

    def __init__(self, raw: RawGroup) -> None:
        self._raw = raw
        self.tokens: tuple[str, ...] = tuple([group_token(value) for value, _ in raw.agents])
        self._members: _Members | None = None

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

    def members(self, robots_url: str | None) -> _Members:
        if self._members is None:
            self._members = _Members(self._raw, robots_url)
        return self._members

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
        "_indexes",
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
        self._indexes: dict[tuple[tuple[int, ...], str], RuleIndex] = {}

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
        file's size: measured, a file holds a few times its size on ordinary
        sites and up to about 32 times on a file of nothing but short
        wildcard rules, plus a kilobyte or two of fixed cost.
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
        check_precedence(precedence)
        chosen = self._selected(agent, agent_match)
        index = self._indexes.get((chosen, precedence))
        if index is None:
            members = [self.groups[i].members(self.url) for i in chosen]
            if len(members) == 1:
                plain_allow, plain_disallow = members[0].plain_allow, members[0].plain_disallow
                wild = members[0].wild
            else:
                plain_allow = [r for m in members for r in m.plain_allow]
                plain_disallow = [r for m in members for r in m.plain_disallow]
                wild = [w for m in members for w in m.wild]
            index = RuleIndex(plain_allow, plain_disallow, wild, precedence)
            self._indexes[chosen, precedence] = index
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
        if is_robots_path(path):
            return True
        found = index.decide(path)
        return found is None or found[1]

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
        found = None if is_robots_path(path) else index.decide(path)
        rule = None if found is None else as_rule(found)
        allowed = rule is None or rule.allow
        return Decision(allowed, rule, groups, url, path, agent, precedence, agent_match)

    # Politeness.

    def _members(self, agent: str, agent_match: str) -> list[_Members]:
        return [self.groups[i].members(self.url) for i in self._selected(agent, agent_match)]

    def crawl_delay(self, agent: str, agent_match: str = TOKEN) -> float | None:
        """Seconds between requests asked of ``agent``; the largest of merged groups."""
        delays = [m.crawl_delay for m in self._members(agent, agent_match)]
        known = [d for d in delays if d is not None]
        return max(known) if known else None

    def request_rate(self, agent: str, agent_match: str = TOKEN) -> RequestRate | None:
        """The most restrictive ``Request-rate`` for ``agent`` (longest delay), if any."""
        rates = [r for m in self._members(agent, agent_match) for r in m.request_rates]
        return max(rates, key=lambda r: r.delay) if rates else None

    def visit_time(self, agent: str, agent_match: str = TOKEN) -> list[UtcWindow]:
        """UTC windows in which ``agent`` is welcome; empty means any time."""
        return [w for m in self._members(agent, agent_match) for w in m.visit_times]


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
