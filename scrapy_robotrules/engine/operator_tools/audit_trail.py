"""The audit trail (``ROBOTRULES_AUDIT``): what its JSON lines hold, and their summary.

One line per decided request (which rule and line of which robots.txt, by
SHA-256, or which outcome decided; SPEC 7), one per robots.txt fetch
(status, size, SHA-256, freshness, outcome, time taken; SPEC 8; the file's
RSL ``License`` URLs) and one per file replaced by another (both SHA-256
values, rules added and removed). Lines are built here, pure; the crawl
layer writes them without blocking the crawl's loop.
No line ever holds a user name or password of a URL, even inside an error
text. :func:`summarise` reads a trail back for ``robotrules audit``: a line
it cannot read is counted, never fatal.
"""

from __future__ import annotations

import heapq
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple

from scrapy_robotrules.engine.digests import sha256_of
from scrapy_robotrules.engine.robots.agents import product_token
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.robots.robotstxt import Decision
from scrapy_robotrules.engine.robots.rule_changes import FileChange

__all__ = [
    "DECISIONS",
    "ENFORCE",
    "MODES",
    "OUTCOMES",
    "SHADOW",
    "AuditSummary",
    "change_line",
    "fetch_line",
    "read_lines",
    "request_line",
    "summarise",
    "text_without_credentials",
    "url_without_credentials",
]

ENFORCE = "enforce"
SHADOW = "shadow"
MODES = (ENFORCE, SHADOW)
DECISIONS = ("allowed", "forbidden", "held", "unreachable")
"""``held``: waiting for robots.txt (written in shadow mode, where it is let through);
``unreachable``: dropped after robots.txt stayed unreachable too long."""
OUTCOMES = (*(o.value for o in Outcome), "custom", "ignored")
"""What decided: a fetch :class:`.Outcome`, the operator's own robots.txt, or no robots.txt."""
MAX_LINE = 1 << 20
"""Bytes of one line read back; a longer line is counted as bad."""
MAX_TEXT = 2048
"""Characters of a request line's ``rule`` and ``reason`` written; the rest is cut (a ``...``
ends it): a rule or a note as long as its file would make every line of its site as long."""
_LATEST = 32_503_680_000.0  # the year 3000: a time past it is no time this trail holds
# Userinfo after any scheme, wherever it stands in a text: "http://user:pw@host".
_USERINFO = re.compile(r"(?i)([a-z][a-z0-9+.-]{0,31}:(?://|\\\\))(?:[^/?#\\\s@]*@)+")


def url_without_credentials(url: str) -> str:
    """``url`` without a user name or password, and without its fragment (never sent)."""
    scheme, slashes, rest = url.partition("://")
    if slashes:
        ends = [i for i in map(rest.find, "/?#\\") if i >= 0]
        authority = rest[: min(ends, default=len(rest))]
        if "@" in authority:
            rest = authority.rpartition("@")[2] + rest[len(authority) :]
        url = f"{scheme}://{rest}"
    return text_without_credentials(url.partition("#")[0])


def text_without_credentials(text: str) -> str:
    """``text`` (an error message, say) with the userinfo of every URL in it taken out."""
    return _USERINFO.sub(r"\1", text) if "@" in text else text


def _number(value: float | None, digits: int = 3) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), digits)


def _cut(text: str) -> str:
    """``text`` within :data:`MAX_TEXT` characters: a request's line costs the same whatever
    its rule or note says."""
    return text if len(text) <= MAX_TEXT else f"{text[: MAX_TEXT - 3]}..."


def _line(record: dict[str, Any]) -> str:
    # ASCII only: a lone surrogate in a URL cannot break the writer's encoding.
    return json.dumps(record, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def request_line(
    decision: Decision,
    *,
    origin: str,
    at: float,
    mode: str = ENFORCE,
    verdict: str | None = None,
    outcome: str = Outcome.RULES.value,
    robots_sha256: str | None = None,
    fetched_at: float | None = None,
    policy: str | None = None,
) -> str:
    """The line of one decided request (no newline).

    ``verdict`` is one of :data:`DECISIONS`, by default what ``decision``
    says; ``shadow`` is true when ``mode`` is shadow and the request was let
    through although the verdict would have stopped it. ``policy`` is the
    host pattern of the per-site policy that applied. The ``rule`` and the
    ``reason`` are kept to :data:`MAX_TEXT` characters each.
    """
    verdict = verdict or ("allowed" if decision.allowed else "forbidden")
    if verdict not in DECISIONS or mode not in MODES or outcome not in OUTCOMES:
        raise ValueError(f"not an audit decision: {verdict!r}, {mode!r}, {outcome!r}")
    rule = decision.rule
    reason = ""
    if rule is None or decision.note:
        reason = decision.note or decision.reason.partition(": ")[2]
    record = {
        "event": "request",
        "time": _number(at),
        "url": url_without_credentials(decision.url),
        "origin": url_without_credentials(origin),
        "decision": verdict,
        "mode": mode,
        "shadow": mode == SHADOW and verdict != "allowed",
        "agent": product_token(decision.agent) or "*",
        "precedence": decision.precedence,
        "rule": None if rule is None else _cut(f"{rule.directive.capitalize()}: {rule.pattern}"),
        "line": None if rule is None else rule.line,
        "reason": _cut(text_without_credentials(reason)) or None,
        "outcome": outcome,
        "robots_sha256": robots_sha256,
        "robots_fetched": _number(fetched_at),
        "policy": policy,
    }
    return _line(record)


def fetch_line(
    origin: str,
    *,
    at: float,
    outcome: str,
    elapsed: float,
    status: int | None = None,
    body: bytes | None = None,
    freshness: float | None = None,
    url: str | None = None,
    error: str | None = None,
    policy: str | None = None,
    licenses: Sequence[str] | None = None,
) -> str:
    """The line of one robots.txt fetch (no newline): ``body`` is what was parsed.

    ``url`` is where the file finally came from (after redirects);
    ``freshness`` the seconds it stays fresh; ``error`` why a fetch failed;
    ``licenses`` the URLs of the file's ``License`` lines (RSL 1.0), when a
    file was parsed.
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"not an audit outcome: {outcome!r}")
    record = {
        "event": "fetch",
        "time": _number(at),
        "origin": url_without_credentials(origin),
        "url": None if url is None else url_without_credentials(url),
        "status": status,
        "bytes": None if body is None else len(body),
        "sha256": None if body is None else sha256_of(body),
        "freshness": _number(freshness),
        "outcome": outcome,
        "elapsed": _number(elapsed),
        "error": None if error is None else text_without_credentials(error),
        "policy": policy,
        "licenses": None if licenses is None else [url_without_credentials(u) for u in licenses],
    }
    return _line(record)


def change_line(change: FileChange, *, at: float, agent: str) -> str:
    """The line of a robots.txt replaced by another file (no newline): both SHA-256 values,
    and the ``Allow``/``Disallow`` lines for ``agent`` added and removed."""
    record = {
        "event": "change",
        "time": _number(at),
        "origin": url_without_credentials(change.origin),
        "old_sha256": change.old_sha256,
        "new_sha256": change.new_sha256,
        "agent": product_token(agent) or "*",
        "added": change.added,
        "removed": change.removed,
    }
    return _line(record)


def read_lines(handle: IO[bytes]) -> Iterator[bytes]:
    """The lines of an open trail; one longer than :data:`MAX_LINE` comes cut (so, bad)."""
    while True:
        line = handle.readline(MAX_LINE)
        if not line:
            return
        if len(line) == MAX_LINE and not line.endswith(b"\n"):
            while (rest := handle.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
        yield line


class Fetch(NamedTuple):
    """One robots.txt fetch as the summary keeps it."""

    elapsed: float
    origin: str
    time: float
    status: int | None
    outcome: str


class Span(NamedTuple):
    """A time an origin's robots.txt stayed unreachable."""

    origin: str
    start: float
    end: float
    fetches: int
    recovered: bool
    """False when the trail ends with the origin still unreachable."""

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass
class OriginSummary:
    """What the trail says of one origin."""

    requests: Counter[str] = field(default_factory=Counter)
    """Requests by decision."""
    forbidden_by: Counter[str] = field(default_factory=Counter)
    """Forbidden requests by the rule (with its line) or outcome that forbade them."""
    shadow: int = 0
    """Requests let through by shadow mode that enforce mode would have stopped."""
    fetches: int = 0
    down_since: float | None = None
    down_fetches: int = 0


@dataclass
class AuditSummary:
    """Everything :func:`summarise` found; ``report()`` is what ``robotrules audit`` prints."""

    lines: int = 0
    bad_lines: int = 0
    first_bad: list[int] = field(default_factory=list)
    requests: int = 0
    fetches: int = 0
    changes: int = 0
    """robots.txt files replaced by another file (``change`` lines)."""
    modes: Counter[str] = field(default_factory=Counter)
    origins: dict[str, OriginSummary] = field(default_factory=dict)
    unreachable: list[Span] = field(default_factory=list)
    slowest: list[Fetch] = field(default_factory=list)
    last_time: float = 0.0


def _forbidding(record: dict[str, Any]) -> str:
    if isinstance(record.get("rule"), str):
        line = record.get("line")
        return f"{record['rule']} (line {line})" if isinstance(line, int) else record["rule"]
    reason = record.get("reason")
    return reason if isinstance(reason, str) and reason else str(record.get("outcome"))


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is no number of this trail")


def _checked(raw: bytes | str) -> dict[str, Any] | None:
    try:
        record = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("origin"), str):
        return None
    when = record.get("time")
    if isinstance(when, bool) or not isinstance(when, (int, float)):
        return None
    if not 0 <= when <= _LATEST:
        return None
    event = record.get("event")
    if event == "request":
        ok = record.get("decision") in DECISIONS and record.get("mode") in MODES
    elif event == "fetch":
        elapsed = record.get("elapsed")
        ok = isinstance(record.get("outcome"), str) and (
            elapsed is None or (isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool))
        )
    else:
        ok = event == "change"
    return record if ok else None


def _fetch(summary: AuditSummary, origin: OriginSummary, record: dict[str, Any]) -> Fetch | None:
    """Count a fetch line; the fetch, when it says how long it took."""
    when = float(record["time"])
    origin.fetches += 1
    summary.fetches += 1
    name = record["origin"]
    if record["outcome"] == Outcome.UNREACHABLE.value:
        if origin.down_since is None:
            origin.down_since = when
        origin.down_fetches += 1
    elif origin.down_since is not None:
        span = Span(name, origin.down_since, when, origin.down_fetches, True)
        summary.unreachable.append(span)
        origin.down_since, origin.down_fetches = None, 0
    elapsed = record.get("elapsed")
    if not isinstance(elapsed, (int, float)):
        return None
    status = record.get("status")
    if not isinstance(status, int) or isinstance(status, bool):
        status = None
    return Fetch(float(elapsed), name, when, status, record["outcome"])


def summarise(lines: Iterable[bytes | str], *, slowest: int = 5) -> AuditSummary:
    """The summary of a trail's lines: per origin, forbidden and by what; unreachable; slowest.

    Bad lines (not JSON, not a line of this trail, a time that is no time)
    are counted, with the numbers of the first ten. The ``slowest`` longest
    fetches are kept.
    """
    summary = AuditSummary()
    heap: list[tuple[float, int, Fetch]] = []
    for number, raw in enumerate(lines, 1):
        summary.lines = number
        if not raw.strip():
            continue
        record = _checked(raw)
        if record is None:
            summary.bad_lines += 1
            if len(summary.first_bad) < 10:
                summary.first_bad.append(number)
            continue
        summary.last_time = max(summary.last_time, float(record["time"]))
        origin = summary.origins.setdefault(record["origin"], OriginSummary())
        if record["event"] == "change":
            summary.changes += 1
            continue
        if record["event"] == "fetch":
            fetch = _fetch(summary, origin, record)
            if fetch is not None and slowest > 0:
                # The line number breaks ties: two fetches never compare by their fields.
                item = (fetch.elapsed, -number, fetch)
                if len(heap) < slowest:
                    heapq.heappush(heap, item)
                else:
                    heapq.heappushpop(heap, item)
            continue
        summary.requests += 1
        summary.modes[record["mode"]] += 1
        decision = record["decision"]
        origin.requests[decision] += 1
        if record.get("shadow") is True:
            origin.shadow += 1
        if decision == "forbidden":
            origin.forbidden_by[_forbidding(record)] += 1
    for name, origin in summary.origins.items():
        if origin.down_since is not None:
            end = max(summary.last_time, origin.down_since)
            summary.unreachable.append(
                Span(name, origin.down_since, end, origin.down_fetches, False)
            )
    summary.unreachable.sort(key=lambda span: (-span.seconds, span.origin, span.start))
    summary.slowest = [fetch for _, _, fetch in sorted(heap, reverse=True)]
    return summary
