"""A parsed robots.txt file: decisions for any agent and mode, each one explainable (SPEC 5, 7).

Parsing only finds the groups (:mod:`.reading`, SPEC 1 and 2); a group's
rules are read (:mod:`.groups`) and indexed (:mod:`.rule_index`) when a crawler
first needs them, and the index is kept per (agent, precedence,
agent_match), so a file asked the same question again answers from a dict
lookup, a normalised path and a bisect (or, asked it twice in a row, from
the last answer kept). ``allowed`` and ``explain`` are one
answer: both ask :meth:`RobotsTxt._decide` for the deciding rule. File-wide
``Sitemap`` and ``Host`` and the group's politeness lines: SPEC 6.
"""

from __future__ import annotations

import functools
import re
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from urllib.parse import urljoin

from scrapy_robotrules.engine.robots.agents import (
    TOKEN,
    WILDCARD,
    AgentMatch,
    check_agent_match,
    group_token,
    product_token,
    select,
)
from scrapy_robotrules.engine.robots.check_work import CheckWork
from scrapy_robotrules.engine.robots.decision import Decision, is_robots_path
from scrapy_robotrules.engine.robots.groups import AgentLine, Extras, Group, read_rules
from scrapy_robotrules.engine.robots.pacing_lines import RequestRate, UtcWindow
from scrapy_robotrules.engine.robots.patterns import Pattern
from scrapy_robotrules.engine.robots.precedence import (
    MOST_SPECIFIC,
    NO_RULE,
    Precedence,
    Rule,
    code_allows,
    code_line,
    strategy_for,
)
from scrapy_robotrules.engine.robots.reading import (
    DEFAULT_MAX_SIZE,
    FileLayout,
    RawGroup,
    count_unknown,
    extra_items,
    read_bytes,
    read_layout,
)
from scrapy_robotrules.engine.robots.rule_index import RuleIndex
from scrapy_robotrules.engine.robots.signal_lines import (
    License,
    read_licenses,
    usage_lines,
)
from scrapy_robotrules.engine.robots.urls import request_path

__all__ = ["AgentLine", "Decision", "Group", "License", "RobotsTxt", "Rule", "is_robots_path"]

_ABSOLUTE_HTTP = re.compile(r"https?://", re.IGNORECASE)
_MAX_VIEWS = 64
_MAX_SHOWN = 32
_KEYS: dict[tuple[str, str, str], tuple[str, str, str]] = {}
# A crawler asks every file with the same agent string or two.
_product_token = functools.lru_cache(maxsize=_MAX_VIEWS)(product_token)
WEIGHT_BASE = 2048
WEIGHT_PER_BYTE = 20
_NO_DECISION: tuple[RuleIndex | None, str, int] = (None, "", NO_RULE)


class RobotsTxt:
    """A robots.txt file, parsed. Build one with :meth:`parse`."""

    __slots__ = (
        "_agent_ends",
        "_agent_lines",
        "_agents",
        "_bodies",
        "_body_lines",
        "_groups",
        "_last",
        "_shown",
        "_unknown_lines",
        "_views",
        "host",
        "license_notes",
        "licenses",
        "sitemaps",
        "size",
        "truncated",
        "url",
        "usage_lines",
        "work",
    )

    def __init__(
        self,
        layout: FileLayout | None = None,
        *,
        url: str | None = None,
        sitemaps: Sequence[str] = (),
        truncated: bool = False,
        size: int = 0,
        usage: Sequence[tuple[int, str, str]] = (),
        licenses: Sequence[License] = (),
        license_notes: Sequence[str] = (),
    ) -> None:
        self.url = url
        self.usage_lines: tuple[tuple[int, str, str], ...] = tuple(usage)
        """``Content-Usage``, ``Content-Signal`` lines: (line, key, value): see :mod:`..usage`."""
        self.licenses: tuple[License, ...] = tuple(licenses)
        """The file's ``License`` lines (RSL 1.0), file-wide: shown, never enforced."""
        self.license_notes: tuple[str, ...] = tuple(license_notes)
        """What of the ``License`` lines was cut or not read, one line each (see
        :func:`~.signal_lines.read_licenses`); empty when they were read whole."""
        self.size = size
        """Bytes of the file that were read (after the size limit)."""
        if layout is None:
            layout = read_layout(b"")
        # The groups in columns (see FileLayout), one object each: a
        # Group is made only for the groups a caller asks to see.
        self._bodies: tuple[bytes, ...] = tuple(layout.bodies)
        self._agents: tuple[str, ...] = tuple(layout.agent_values)
        # Each group's first member line, each group's end in _agents, and
        # each User-agent line's number.
        self._body_lines = array("i", layout.body_lines)
        self._agent_ends = array("i", layout.agent_ends)
        self._agent_lines = array("i", layout.agent_lines)
        self._groups: list[Group | None] | None = None
        self.sitemaps: list[str] = list(sitemaps)
        self.host = layout.host
        self.truncated = truncated
        self._unknown_lines = layout.unknown_lines
        self._views: dict[str | tuple[str, str, str], RuleIndex] = {}
        self._shown: dict[int, Rule] | None = None
        self._last = _NO_DECISION
        """(index, path, code) of the last decision (see :meth:`_decide`)."""
        self.work: CheckWork | None = None
        """What the file's checks have cost since :meth:`count_work` (``None`` before)."""

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
        licenses, license_notes = read_licenses(data, url)
        return cls(
            layout,
            url=url,
            sitemaps=sitemaps,
            truncated=truncated,
            size=len(data),
            usage=usage_lines(data),
            licenses=licenses,
            license_notes=license_notes,
        )

    def __repr__(self) -> str:
        return f"<RobotsTxt {self.url or '(no url)'}: {len(self._bodies)} groups>"

    # Groups.

    @property
    def groups(self) -> tuple[Group, ...]:
        """The file's groups, in file order."""
        return tuple(map(self._group, range(len(self._bodies))))

    def _agent_range(self, i: int) -> tuple[int, int]:
        """Where group ``i``'s ``User-agent`` lines are in ``_agents``."""
        ends = self._agent_ends
        return (ends[i - 1] if i else 0), ends[i]

    def _group(self, i: int) -> Group:
        groups = self._groups
        if groups is None:
            groups = self._groups = [None] * len(self._bodies)
        group = groups[i]
        if group is None:
            start, end = self._agent_range(i)
            values, lines = self._agents, self._agent_lines
            agents = tuple((values[j], lines[j]) for j in range(start, end))
            group = groups[i] = Group(RawGroup(agents, self._bodies[i], self._body_lines[i]))
        return group

    def _tokens(self) -> list[tuple[str, ...]]:
        """Each group's reduced ``User-agent`` tokens (see :func:`.group_token`)."""
        tokens = list(map(group_token, self._agents))
        return [tuple(tokens[slice(*self._agent_range(i))]) for i in range(len(self._bodies))]

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
        return self._unknown_lines + sum(map(count_unknown, self._bodies))

    # Deciding.

    def _selected(self, agent: str, agent_match: AgentMatch) -> tuple[int, ...]:
        """The groups that apply to ``agent``, as :func:`.select` says.

        In ``token`` style (nearly every crawler), found from the flat
        ``User-agent`` columns, with no tuple of tokens made per group. A
        fast path: its plain reference, :func:`.select` over each group's
        tokens, is in ``tests/helpers/plain_references.py``.
        """
        if agent_match != TOKEN:
            return select(self._tokens(), agent, check_agent_match(agent_match))
        tokens = list(map(group_token, self._agents))
        token = _product_token(agent)
        if not token or token not in tokens:
            token = WILDCARD
        # The group of the j-th User-agent line: the first whose end is after j.
        ends = self._agent_ends
        at = [bisect_right(ends, j) for j, named in enumerate(tokens) if named == token]
        return tuple(dict.fromkeys(at))

    def _index(self, agent: str, precedence: Precedence, agent_match: AgentMatch) -> RuleIndex:
        key = _view_key(agent, precedence, agent_match)
        index = self._views.get(key)
        if index is not None:
            return index
        if not isinstance(key, str):
            # Every file asked by the same crawler holds the same key: one tuple.
            if len(_KEYS) >= _MAX_VIEWS:
                _KEYS.clear()
            key = _KEYS.setdefault(key, key)
        strategy = strategy_for(precedence)
        chosen = self._selected(agent, agent_match)
        # Agents that select the same groups share one index.
        index = next((i for i in self._views.values() if i.built_for(chosen, strategy)), None)
        if index is None:
            bodies, lines = self._bodies, self._body_lines
            read = [read_rules(bodies[i], lines[i], self.url) for i in chosen]
            wild = read[0].wild if len(read) == 1 else [w for r in read for w in r.wild]
            index = RuleIndex(
                [r.allow for r in read],
                [r.disallow for r in read],
                wild,
                [r.stars for r in read],
                strategy,
                pattern_at=functools.partial(self._pattern_at, chosen),
                groups=chosen,
                many=[r.many for r in read],
                work=self.work,
            )
        if len(self._views) >= _MAX_VIEWS:
            self._views.clear()  # Bound the memory of callers that vary the agent.
        self._views[key] = index
        return index

    def _decide(
        self, path: str, agent: str, precedence: Precedence, agent_match: AgentMatch
    ) -> int:
        """The one answer behind :meth:`allowed` and :meth:`explain`.

        The code of the rule that decides the normalised ``path``
        (:data:`.NO_RULE` when none does; ``/robots.txt`` itself is always
        allowed, whatever the rules say). The view's key (:func:`_view_key`)
        and a first look for ``/robots.txt`` are written out here: every
        check comes this way. A fast path: its plain reference, which calls
        both, is in ``tests/helpers/plain_references.py``.
        """
        # The key of _view_key(), inlined: the hot path of every check.
        if precedence == MOST_SPECIFIC and agent_match == TOKEN:
            index = self._views.get(agent)
        else:
            index = self._views.get((agent, precedence, agent_match))
        if index is None:
            index = self._index(agent, precedence, agent_match)
        # A slice compared, not startswith(): no call, no arguments parsed.
        if path[1:2] == "r" and is_robots_path(path):
            return NO_RULE
        # The same question often comes again at once: allowed() then
        # explain(), or another agent that shares this index. The file
        # keeps its last answer (replaced in one assignment).
        last = self._last
        if last[0] is index and last[1] == path:
            return last[2]
        code = index.decide(path)
        self._last = (index, path, code)
        return code

    def allowed(
        self,
        url: str,
        agent: str,
        precedence: Precedence = MOST_SPECIFIC,
        agent_match: AgentMatch = TOKEN,
    ) -> bool:
        """Whether ``agent`` may fetch ``url`` (absolute, or a bare path)."""
        return code_allows(self._decide(request_path(url), agent, precedence, agent_match))

    def explain(
        self,
        url: str,
        agent: str,
        precedence: Precedence = MOST_SPECIFIC,
        agent_match: AgentMatch = TOKEN,
    ) -> Decision:
        """The decision for ``url`` with the rule and groups behind it."""
        path = request_path(url)
        code = self._decide(path, agent, precedence, agent_match)
        # The groups the deciding index was built from: no second select().
        groups = [self._group(i) for i in self._index(agent, precedence, agent_match).groups]
        rule = None if code == NO_RULE else self._rule(groups, code_line(code))
        return Decision(code_allows(code), rule, groups, url, path, agent, precedence, agent_match)

    def count_work(self) -> CheckWork:
        """Count what this file's checks cost from now on, and return the counts.

        In units of work (wildcard rules tried against a path, buckets of
        them walked, rules read again...: see :class:`.CheckWork`), the same
        on every machine where time is not: tests bound a check's work by
        them, and benchmarks may show them. Off until asked, so that a file
        that is not asked costs nothing more per check.
        """
        work = self.work
        if work is None:
            work = self.work = CheckWork()
            for index in self._views.values():
                index.count_into(work)
        return work

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
            if self.work is not None:
                self.work.rules_read_again += 1
            group = next(g for g in groups if g.holds(line))
            directive, written = group.member(line)
            rule = Rule(directive, written, line)
            if len(shown) >= _MAX_SHOWN:
                shown.clear()
            shown[line] = rule
        return rule

    def _pattern_at(self, chosen: Sequence[int], line: int) -> Pattern:
        """The wildcard pattern of the rule at ``line``, read again from its group."""
        if self.work is not None:
            self.work.rules_read_again += 1
        groups = map(self._group, chosen)
        return next(g for g in groups if g.holds(line)).pattern(line, self.url)

    # Politeness.

    def _extras(self, agent: str, agent_match: AgentMatch) -> list[Extras]:
        return [self._group(i).extras() for i in self._selected(agent, agent_match)]

    def pace(
        self, agent: str, agent_match: AgentMatch = TOKEN
    ) -> tuple[float | None, RequestRate | None]:
        """:meth:`crawl_delay` and :meth:`request_rate` at once, the groups selected once.

        A crawler asks both of each file it fetches, and most files have no
        such line: their groups are then not made at all.
        """
        chosen = self._selected(agent, agent_match)
        bodies = self._bodies
        if not any(extra_items(bodies[i]) for i in chosen):
            return None, None
        extras = [self._group(i).extras() for i in chosen]
        delays = [m.crawl_delay for m in extras if m.crawl_delay is not None]
        rates = [r for m in extras for r in m.request_rates]
        return (
            max(delays) if delays else None,
            max(rates, key=lambda r: r.delay) if rates else None,
        )

    def groups_for(self, agent: str, agent_match: AgentMatch = TOKEN) -> tuple[Group, ...]:
        """The groups that apply to ``agent`` (SPEC 3), in file order."""
        return tuple(map(self._group, self._selected(agent, agent_match)))

    def crawl_delay(self, agent: str, agent_match: AgentMatch = TOKEN) -> float | None:
        """Seconds between requests asked of ``agent``; the largest of merged groups."""
        return self.pace(agent, agent_match)[0]

    def request_rate(self, agent: str, agent_match: AgentMatch = TOKEN) -> RequestRate | None:
        """The most restrictive ``Request-rate`` for ``agent`` (longest delay), if any."""
        return self.pace(agent, agent_match)[1]

    def visit_time(self, agent: str, agent_match: AgentMatch = TOKEN) -> list[UtcWindow]:
        """UTC windows in which ``agent`` is welcome; empty means any time."""
        return [w for m in self._extras(agent, agent_match) for w in m.visit_times]


def _view_key(
    agent: str, precedence: Precedence, agent_match: AgentMatch
) -> str | tuple[str, str, str]:
    """Where a file keeps its index for these arguments: the agent alone in the default mode.

    A crawler nearly always asks in the default mode: a lookup by the agent
    string needs no tuple built and hashed per check.
    """
    if precedence == MOST_SPECIFIC and agent_match == TOKEN:
        return agent
    return (agent, precedence, agent_match)


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
