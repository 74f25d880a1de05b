"""Usage preferences for one URL and purpose: robots.txt's rules, headers and TDMRep combined.

The robots.txt side builds on the SPEC 5 and 7 decision. Three families
of signals, read as their current texts say (:mod:`.vocabulary` reads one
statement, :mod:`.tdmrep` the W3C TDMRep file, headers and meta tags):
robots.txt ``Content-Usage`` and ``Content-Signal`` rules apply where
crawling is allowed, the longest matching path of each kind winning
(attach §3.1, of the drafts named in :data:`.AIPREF_DRAFTS`). robots.txt
``License`` lines (RSL 1.0) are shown with the view, never enforced.

Each purpose (:data:`PURPOSES`) comes out allowed, disallowed or unknown,
with the statements behind it. Several statements on one purpose combine as
vocab §5.1 says: any "no" disallows, else any "yes" allows, else unknown.
TDM is TDMRep's alone, and there a later technique overrides an earlier one
(TDMRep §6.7).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from scrapy_robotrules.engine.robots.agents import select
from scrapy_robotrules.engine.robots.patterns import Pattern, compile_matcher
from scrapy_robotrules.engine.robots.signal_lines import License, name_licenses
from scrapy_robotrules.engine.robots.urls import request_path
from scrapy_robotrules.engine.usage.headers import header_statements, read_headers
from scrapy_robotrules.engine.usage.structured import parse_dictionary
from scrapy_robotrules.engine.usage.vocabulary import (
    AI_INPUT,
    AIPREF_DRAFTS,
    ALLOWED,
    CONTENT_SIGNAL,
    CONTENT_USAGE,
    DISALLOWED,
    PURPOSES,
    ROBOTS,
    SEARCH,
    TDM,
    TDMREP_FILE,
    TRAIN_AI,
    UNKNOWN,
    Preference,
    Statement,
    aipref_preferences,
    content_signal_preferences,
    followed_texts,
    make_statement,
)

if TYPE_CHECKING:
    from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt
    from scrapy_robotrules.engine.usage.tdmrep import TdmRep

__all__ = [
    "AIPREF_DRAFTS",
    "ALLOWED",
    "DISALLOWED",
    "PURPOSES",
    "TDM",
    "TDMREP_FILE",
    "UNKNOWN",
    "USAGE_REFUSAL",
    "License",
    "Preference",
    "Statement",
    "UsageView",
    "aipref_preferences",
    "content_signal_preferences",
    "header_statements",
    "nothing_said",
    "parse_dictionary",
    "read_headers",
    "refuse_purposes",
    "robots_statements",
    "usage_view",
]


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
    licenses: tuple[License, ...] = ()
    """The origin's robots.txt ``License`` lines (RSL 1.0): shown, not enforced."""

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
        lines += [
            f"kept as data, no purpose: {k}={v} ({s})" for s in self.statements for k, v in s.data
        ]
        lines += [f"not read: {s.error} ({s})" for s in self.statements if s.error]
        lines += [f"licence, not enforced (RSL 1.0): {lic}" for lic in self.licenses]
        lines += list(self.notes)
        texts = followed_texts({s.kind for s in self.statements})
        if texts:
            lines.append(texts)
        return lines

    def as_dict(self) -> dict[str, object]:
        """Plain data (JSON-ready), for logs, exports and the command line."""
        return {
            "url": self.url,
            "purposes": {p: self.state(p) for p in PURPOSES},
            "statements": [s.as_dict() for s in self.statements],
            "notes": list(self.notes),
            "tdm_policy": self.tdm_policy,
            "licenses": [lic.url for lic in self.licenses],
        }


# robots.txt rules (attach §3).

_KINDS = {
    "content-usage": (CONTENT_USAGE, ""),
    "content-signal": (CONTENT_SIGNAL, ""),
    "content-signals": (CONTENT_SIGNAL, "Content-Signals"),
}
"""A usage line's key (lower-cased) -> its kind, and its name as shown when another spelling."""


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
    (combined as vocab §5.1: a refusal wins, unlike Allow and Disallow).
    The two kinds are separate vocabularies: each has its own longest
    match. ``Content-Signal`` lines before the first group apply to every
    crawler, as sites mean them; ``Content-Usage`` is a group rule (attach
    §3), so such lines of it are ignored, and noted.
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
        kind, name = _KINDS[key]
        group = _group_of(starts, line)
        if group is None:
            if kind == CONTENT_USAGE:
                outside += 1
                continue
        elif group not in chosen:
            continue
        path, preference = _split_path(value)
        priority = _priority(path, target)
        if priority is None:
            continue
        held = best.get(kind)
        statement = make_statement(
            ROBOTS, kind, value, line=line, path=path, said=preference, name=name
        )
        if held is None or priority > held[0]:
            best[kind] = (priority, [statement])
        elif priority == held[0]:
            held[1].append(statement)
    if outside:
        notes.append(
            f"robots.txt: {outside} Content-Usage lines before any User-agent line belong to"
            " no group: ignored (a group rule, attach §3)"
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


# The view.


def usage_view(
    url: str,
    statements: Sequence[Statement] = (),
    *,
    tdm: TdmRep | None = None,
    tdm_headers: tuple[Iterable[str | bytes], Iterable[str | bytes]] = ((), ()),
    metas: Iterable[tuple[str, str]] = (),
    notes: Sequence[str] = (),
    licenses: Sequence[License] = (),
) -> UsageView:
    """One URL's preferences from its statements (robots.txt rules, headers) and TDMRep.

    ``tdm`` is the origin's tdmrep.json as read, ``tdm_headers`` the
    ``tdm-reservation`` and ``tdm-policy`` header values, ``metas`` the
    page's ``(name, content)`` meta pairs, ``licenses`` the origin's
    robots.txt ``License`` lines (shown with the view).
    """
    from scrapy_robotrules.engine.usage.tdmrep import tdm_statement

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
    return UsageView(url, preferences, tuple(everything), tuple(all_notes), policy, tuple(licenses))


_NOTHING: list[Mapping[str, Preference]] = []
"""The preferences of a view in which nothing is said (made at first use)."""
_set_field = object.__setattr__


def nothing_said(url: str) -> UsageView:
    """The view of a URL for which nothing states a preference: what ``usage_view(url)`` gives.

    Most responses say nothing at all; their view is made without reading
    anything, and without the frozen dataclass's field-by-field ``__init__``:
    only ``url`` and ``preferences`` are set, the other fields keep their
    (class) defaults, which is what nothing said gives them.
    """
    if not _NOTHING:
        _NOTHING.append(MappingProxyType(dict(usage_view(url).preferences)))
    view: UsageView = object.__new__(UsageView)
    _set_field(view, "url", url)
    _set_field(view, "preferences", _NOTHING[0])
    return view


USAGE_REFUSAL = "usage preferences refuse"
"""How a decision's note begins when robots.txt refuses a declared purpose."""


def refuse_purposes(robots: RobotsTxt, decision: Decision, purposes: Sequence[str]) -> Decision:
    """``decision`` itself, or a refusal when robots.txt refuses one of ``purposes`` for its URL.

    The refusal's note names the statements that refuse, then a few of the
    file's ``License`` lines (RSL 1.0: where the site's terms are; not
    enforced), shortened (:func:`.name_licenses`): a refused request costs
    the same whatever the file's licences say. The decision refers to the
    file's licences, all of them, without copying them.
    """
    statements, _ = robots_statements(robots, decision)
    if not statements:
        return decision
    refused = usage_view(decision.url, statements).refused(purposes)
    if not refused:
        return decision
    said = "; ".join(str(p) for p in refused)
    if robots.licenses:
        said = f"{said}; {name_licenses(robots.licenses)}"
    names = ", ".join(p.purpose for p in refused)
    return replace(
        decision,
        allowed=False,
        note=f"{USAGE_REFUSAL} {names}: {said}",
        refused_by="usage",
        licenses=robots.licenses,
    )
