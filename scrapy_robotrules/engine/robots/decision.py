"""Why a URL is allowed or not (SPEC 7): the deciding rule, the groups that applied, the mode.

Also the one exception every mode shares: ``/robots.txt`` itself is always
allowed (RFC 9309 §2.2.2).
"""

from __future__ import annotations

from dataclasses import dataclass

from scrapy_robotrules.engine.robots.agents import AgentMatch, product_token
from scrapy_robotrules.engine.robots.groups import Group
from scrapy_robotrules.engine.robots.precedence import Precedence, Rule
from scrapy_robotrules.engine.robots.signal_lines import License
from scrapy_robotrules.engine.robots.urls import request_path

__all__ = ["ROBOTS_PATH", "Decision", "is_robots_path"]

ROBOTS_PATH = "/robots.txt"


@dataclass(frozen=True)
class Decision:
    """Why a URL is allowed or not: the deciding rule, the groups that applied, the mode."""

    allowed: bool
    rule: Rule | None
    groups: list[Group]
    url: str
    path: str
    agent: str
    precedence: Precedence
    agent_match: AgentMatch
    note: str = ""
    """Set when no file decided: why the origin is allowed or disallowed as a whole."""
    refused_by: str = ""
    """What refused a URL the robots.txt rules allow: ``"usage"`` (a usage preference of
    robots.txt) or ``"tdmrep"`` (tdmrep.json); ``""`` when the rules decided. SPEC 7: a
    drop says why, and is counted as what it is, without reading its note."""
    licenses: tuple[License, ...] = ()
    """A usage refusal's: the file's ``License`` lines (RSL 1.0), the file's own tuple (never
    a copy); its note names a few of them."""

    @classmethod
    def without_rules(
        cls,
        url: str,
        agent: str,
        precedence: Precedence,
        agent_match: AgentMatch,
        *,
        allowed: bool,
        note: str,
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
    return path.startswith(ROBOTS_PATH) and (
        len(path) == len(ROBOTS_PATH) or path[len(ROBOTS_PATH)] == "?"
    )
