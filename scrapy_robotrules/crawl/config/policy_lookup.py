"""Per-site policy in a running crawl (``ROBOTRULES_POLICIES``, SPEC 6 and 8).

The engine reads and checks the setting (``engine.operator_tools.site_policies``) and says
how a site's delay is kept (``engine.operator_tools.site_delays``); this part holds them for
one crawler, read once when the crawl starts (a bad value stops it with one
message, as any other setting), and answers per origin: ``ignore`` and a
robots.txt of the operator's own decide without a fetch; the other fields
change the agent, precedence, agent matching, 401/403 handling and delays
of the normal path. Every decision a policy changed names it in its reason.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Protocol

from scrapy_robotrules.crawl.config.table import value
from scrapy_robotrules.engine.operator_tools.site_policies import Policies, Policy
from scrapy_robotrules.engine.robots.decision import Decision

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.settings import BaseSettings

    from scrapy_robotrules.engine.database import RobotRules

__all__ = [
    "ACTION_SETTING",
    "POLICY_COUNTED",
    "SETTING",
    "Counts",
    "SitePolicies",
    "adjusted",
    "named",
]


class Counts(Protocol):
    """Where a policy's use is counted: the reporter, given (configuration sits below it)."""

    def inc(self, key: str, by: int = ...) -> None: ...


SETTING = "ROBOTRULES_POLICIES"
ACTION_SETTING = "ROBOTRULES_MAX_CRAWL_DELAY_ACTION"
POLICY_COUNTED = "_robotrules_policy"
"""Meta key: the URL a policy's decision was counted for (a request is counted once)."""
_FOUND = 4096
"""Origins whose policy lookup is remembered (a few dict lookups each otherwise)."""


def named(decision: Decision, policy: Policy) -> Decision:
    """``decision`` with a reason that names ``policy`` (IgnoreRequest message, DEBUG line)."""
    reason = decision.reason
    verdict = "allowed" if decision.allowed else "disallowed"
    rest = reason[len(verdict) :].lstrip(": ") if reason.startswith(verdict) else reason
    return dataclasses.replace(decision, note=f"{rest}; {policy.describe()}")


def adjusted(decision: Decision, policy: Policy | None, skipped: str | None) -> Decision:
    """The decision under rules a policy changed, or on a site skipped for its Crawl-delay."""
    if skipped is not None:  # max Crawl-delay action "skip": no request of the site goes
        return Decision.without_rules(
            decision.url,
            decision.agent,
            decision.precedence,
            decision.agent_match,
            allowed=False,
            note=skipped,
        )
    return decision if policy is None else named(decision, policy)


class SitePolicies:
    """The policies of one crawler, found by origin, and the project's Crawl-delay action."""

    __slots__ = ("_found", "action", "any", "policies")

    def __init__(self, policies: Policies, action: str = "clamp") -> None:
        self.policies = policies
        self.action = action
        """``ROBOTRULES_MAX_CRAWL_DELAY_ACTION``: ``clamp`` or ``skip``."""
        self.any = bool(policies)
        self._found: dict[str, Policy | None] = {}

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SitePolicies:
        """Both settings, read through the table (:class:`RobotRulesSettingError` if bad)."""
        return cls(value(settings, SETTING), value(settings, ACTION_SETTING))

    def for_origin(self, origin: str) -> Policy | None:
        """The policy for ``origin`` (``scheme://host:port``), if one names its host."""
        if not self.any:
            return None
        try:
            return self._found[origin]
        except KeyError:
            pass
        found = self.policies.for_url(origin)
        if len(self._found) >= _FOUND:
            self._found.clear()
        self._found[origin] = found
        return found

    def without_fetch(
        self,
        policy: Policy,
        request: Request,
        origin: str,
        *,
        agent: str,
        db: RobotRules,
        reporter: Counts,
    ) -> Decision:
        """The decision of an ``ignore`` or ``robots_txt`` policy (no fetch), counted once."""
        url = request.url
        meta = request.meta
        if meta.get(POLICY_COUNTED) != url:  # decided again at the final gate: counted once
            meta[POLICY_COUNTED] = url
            reporter.inc("policy/ignored" if policy.ignore else "policy/custom")
        precedence, match = db.precedence, db.agent_match
        if policy.ignore:
            return Decision.without_rules(
                url, agent, precedence, match, allowed=True, note=policy.describe()
            )
        agent, precedence, match = policy.choose(agent, precedence, match)
        return named(policy.robots_for(origin).explain(url, agent, precedence, match), policy)
