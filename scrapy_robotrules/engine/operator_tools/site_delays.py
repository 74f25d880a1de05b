"""How a site's Crawl-delay is kept: as asked, clamped to the maximum, skipped, or a policy's own.

The crawl layer asks :func:`site_delay` once per origin and set of rules,
with the delay the rules ask (the larger of Crawl-delay and Request-rate,
SPEC 6) and the project's settings; a per-site policy (:mod:`.site_policies`)
replaces those settings for its hosts. ``skip`` is the operator's
choice when a site asks more than they can wait: the site is not crawled,
with a reason for the log and the audit, rather than crawled too slowly.
"""

from __future__ import annotations

from typing import NamedTuple

from scrapy_robotrules.engine.operator_tools.site_policies import CLAMP, SKIP, Policy, plain

__all__ = ["DelayVerdict", "site_delay"]


class DelayVerdict(NamedTuple):
    """How a site's Crawl-delay is kept: the delay, or why the site is skipped."""

    delay: float | None
    """Seconds to keep between requests to the origin; ``None``: no delay."""
    skip: str | None = None
    """Set when the site is not crawled at all: the reason, for logs and the audit."""
    note: str = ""
    """Why the delay differs from what robots.txt asked (a policy, the maximum)."""


def site_delay(
    asked: float | None,
    policy: Policy | None = None,
    *,
    obey: bool = True,
    maximum: float = 60.0,
    action: str = CLAMP,
) -> DelayVerdict:
    """The delay kept for a site whose rules ask ``asked`` seconds (Crawl-delay, Request-rate).

    ``obey``, ``maximum`` and ``action`` are the project's ``ROBOTRULES_CRAWL_DELAY``,
    ``ROBOTRULES_MAX_CRAWL_DELAY`` and ``ROBOTRULES_MAX_CRAWL_DELAY_ACTION``; the
    policy's fields replace them. A policy's own ``crawl_delay`` is kept as set.
    """
    if policy is not None:
        if policy.crawl_delay is not None:
            return DelayVerdict(policy.crawl_delay or None, None, policy.describe())
        if policy.obey_crawl_delay is not None:
            obey = policy.obey_crawl_delay
        if policy.max_crawl_delay is not None:
            maximum = policy.max_crawl_delay
        if policy.max_crawl_delay_action is not None:
            action = policy.max_crawl_delay_action
    if asked is None or not asked > 0:
        return DelayVerdict(None)
    if not obey:
        ignored = policy is not None and policy.obey_crawl_delay is False
        return DelayVerdict(None, None, policy.describe() if ignored and policy else "")
    if asked <= maximum:
        return DelayVerdict(float(asked))
    where = "ROBOTRULES_MAX_CRAWL_DELAY"
    if policy is not None and policy.max_crawl_delay is not None:
        where = f"the max_crawl_delay of the policy for {policy.pattern}"
    limit = f"{where} ({plain(maximum)} s)"
    if action == SKIP:
        return DelayVerdict(
            None, f"robots.txt asks a Crawl-delay of {plain(asked)} s, above {limit}"
        )
    note = f"Crawl-delay {plain(asked)} s clamped to {limit}"
    return DelayVerdict(float(maximum) or None, None, note)
