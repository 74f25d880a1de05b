"""How one robots.txt differs from the one it replaces, for one agent (SPEC 3 and 8).

A refresh (SPEC 8) may bring a file other than the one held: its rules for
the crawler's agent are those of the groups chosen for that agent in each
file (SPEC 3), compared as lines (directive and value as written), so a
rule moved within its group is no change and a rule written twice counts
twice. Files are named by the SHA-256 of their body, as audit lines name them.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robotrules.engine.robots.agents import TOKEN, AgentMatch

if TYPE_CHECKING:
    from scrapy_robotrules.engine.robots.robotstxt import RobotsTxt

__all__ = ["FileChange", "RuleChanges", "rule_changes"]


class FileChange(NamedTuple):
    """One origin's file replaced by another: both files, their SHA-256, the rule counts."""

    origin: str
    old: RobotsTxt
    new: RobotsTxt
    old_sha256: str
    new_sha256: str
    added: int
    removed: int


class RuleChanges(NamedTuple):
    """Rules for one agent in the new file and not in the old one, and the other way round."""

    added: int
    removed: int


def _rules(robots: RobotsTxt, agent: str, agent_match: AgentMatch) -> Counter[tuple[str, str]]:
    return Counter(
        line for group in robots.groups_for(agent, agent_match) for line in group.rule_lines()
    )


def rule_changes(
    old: RobotsTxt, new: RobotsTxt, agent: str, agent_match: AgentMatch = TOKEN
) -> RuleChanges:
    """How many ``Allow``/``Disallow`` lines for ``agent`` ``new`` adds to ``old`` and removes."""
    before, after = _rules(old, agent, agent_match), _rules(new, agent, agent_match)
    return RuleChanges(sum((after - before).values()), sum((before - after).values()))
