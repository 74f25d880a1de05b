"""W3C TDMRep: ``/.well-known/tdmrep.json``, the ``tdm-reservation`` headers and meta tags.

TDM Reservation Protocol, Community Group final report of 10 May 2024
(not a W3C Standard). Section numbers are the report's:

- §5.1: ``tdm-reservation`` is ``1`` (rights reserved: the EU CDSM Article 4
  opt-out) or ``0`` (not reserved); any other value is a protocol error and
  counts as unset. §5.2: ``tdm-policy`` is a URL, not to be processed when
  the reservation is ``0``.
- §6.1: the file is a JSON array of rules ``{location, tdm-reservation,
  tdm-policy}``; a location is a robots.txt-style path pattern (``*``,
  final ``$``), matched case-sensitively as a prefix, percent-encoding
  normalised; the first matching rule in the array is the one used; no
  match is unset. A server that gives no such file does not implement the
  protocol: a missing or broken file is no reservation.
- §6.7: the file first, then the headers, then the HTML meta tags, each
  superseding the previous value; a technique that says nothing resets
  nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scrapy_robotrules.engine.robots.patterns import Pattern, compile_matcher
from scrapy_robotrules.engine.robots.urls import request_path
from scrapy_robotrules.engine.usage.vocabulary import (
    HEADER,
    META,
    TDM,
    TDM_RESERVATION,
    TDMREP_FILE,
    Statement,
)

__all__ = ["MAX_FILE_BYTES", "MAX_RULES", "TDMREP_PATH", "TdmRep", "TdmRule", "tdm_statement"]

TDMREP_PATH = "/.well-known/tdmrep.json"
MAX_FILE_BYTES = 512_000
"""Bytes of a tdmrep.json read, as for robots.txt; a larger file is broken."""
MAX_RULES = 1024
"""Rules of a tdmrep.json read; the rest are not."""


def _reservation(value: object) -> int | None:
    """``1`` or ``0``; anything else (``True``, ``"1"``, ``2``) is a protocol error: ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    return None


@dataclass(frozen=True)
class TdmRule:
    """One rule of a tdmrep.json: its position (1-based), location, reservation, policy."""

    number: int
    location: str
    reservation: int | None
    """``None``: a protocol error (the rule matches, and leaves the reservation unset)."""
    written: str
    """The reservation as written, for explanations."""
    policy: str | None = None

    def matches(self, path: str) -> bool:
        matcher = compile_matcher(self.location)
        if matcher is None:
            return False
        if isinstance(matcher, Pattern):
            return matcher.matches(path)
        return path.startswith(matcher)


@dataclass(frozen=True)
class TdmRep:
    """An origin's tdmrep.json as read: its rules, or why there are none."""

    rules: tuple[TdmRule, ...] = ()
    note: str = ""
    """Why the file gives no rules (missing, broken), or what was left unread."""

    @classmethod
    def parse(cls, body: bytes | str) -> TdmRep:
        """Read a tdmrep.json body; never raises: a broken file has no rules and says why."""
        if len(body) > MAX_FILE_BYTES:
            return cls(note=f"tdmrep.json broken: larger than {MAX_FILE_BYTES} bytes")
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            return cls(note=f"tdmrep.json broken: not JSON ({type(exc).__name__})")
        if not isinstance(data, list):
            return cls(note="tdmrep.json broken: not a JSON array")
        rules: list[TdmRule] = []
        skipped = 0
        for number, item in enumerate(data[:MAX_RULES], 1):
            location = item.get("location") if isinstance(item, dict) else None
            if not isinstance(location, str) or "tdm-reservation" not in item:
                skipped += 1  # location and tdm-reservation are mandatory (§6.1)
                continue
            raw = item["tdm-reservation"]
            policy = item.get("tdm-policy")
            rules.append(
                TdmRule(
                    number,
                    location[:4096],
                    _reservation(raw),
                    json.dumps(raw)[:64],
                    policy[:4096] if isinstance(policy, str) and policy else None,
                )
            )
        notes = []
        if skipped:
            notes.append(f"{skipped} rules without location or tdm-reservation ignored")
        if len(data) > MAX_RULES:
            notes.append(f"rules after the first {MAX_RULES} not read")
        return cls(tuple(rules), "tdmrep.json: " + "; ".join(notes) if notes else "")

    @classmethod
    def missing(cls, why: str) -> TdmRep:
        return cls(note=f"no tdmrep.json ({why}): no reservation from it")

    def rule_for(self, url: str) -> TdmRule | None:
        """The first rule whose location matches ``url`` (§6.1), if any."""
        path = request_path(url)
        for rule in self.rules:
            if rule.matches(path):
                return rule
        return None


def _first(values: Iterable[str | bytes]) -> str | None:
    for value in values:
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        return text.strip()[:4096]
    return None


def tdm_statement(
    url: str,
    tdm: TdmRep | None,
    headers: tuple[Iterable[str | bytes], Iterable[str | bytes]],
    metas: Iterable[tuple[str, str]],
) -> tuple[Statement | None, str | None, list[str]]:
    """The TDMRep statement deciding ``url`` (§6.7), the policy that goes with it, and notes."""
    notes: list[str] = []
    found: Statement | None = None
    policy: str | None = None
    if tdm is not None:
        if tdm.note:
            notes.append(tdm.note)
        rule = tdm.rule_for(url)
        if rule is not None:
            if rule.reservation is None:
                notes.append(
                    f"tdmrep.json rule {rule.number}: tdm-reservation {rule.written}"
                    " is no 0 or 1: unset (§5.1)"
                )
            else:
                found = _make(
                    TDMREP_FILE, rule.written, rule.reservation, rule.number, rule.location
                )
                policy = rule.policy
    steps: Sequence[tuple[str, str | None, str | None]] = (
        (HEADER, _first(headers[0]), _first(headers[1])),
        (META, *_meta_values(metas)),
    )
    for source, reservation, step_policy in steps:
        if reservation is not None:
            value = _reservation(reservation)
            if value is None:
                notes.append(
                    f"{source} tdm-reservation {reservation[:64]!r} is no 0 or 1: ignored (§5.1)"
                )
            else:
                found = _make(source, reservation, value, 1, None)
        if step_policy:
            policy = step_policy
    if found is None or found.preferences.get(TDM) is not False:
        policy = None  # §5.2: no policy without a reservation
    return found, policy, notes


def _make(source: str, written: str, value: int, number: int, location: str | None) -> Statement:
    return Statement(
        source, TDM_RESERVATION, written, {TDM: value == 0}, line=number, path=location
    )


def _meta_values(metas: Iterable[tuple[str, str]]) -> tuple[str | None, str | None]:
    reservation = policy = None
    for name, content in metas:
        lowered = name.strip().lower()
        if lowered == "tdm-reservation" and reservation is None:
            reservation = content.strip()[:4096]
        elif lowered == "tdm-policy" and policy is None:
            policy = content.strip()[:4096]
    return reservation, policy
