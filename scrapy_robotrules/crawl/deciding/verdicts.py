"""What is done with each decision: enforced, or let through in shadow mode; and audited.

Shadow mode (``ROBOTRULES_MODE = "shadow"``) is a dry run: every
request is decided exactly as in enforce mode, waiting for its robots.txt
the same way (parked, held while the file is unreachable), and counted under
the same stats. Only the end differs: a request enforce mode would drop goes
on to be downloaded, counted once more as ``shadow/would_forbid`` (robots.txt
forbids it) or ``shadow/would_hold`` (its robots.txt stayed unreachable for
``ROBOTRULES_UNREACHABLE_TIMEOUT``: enforce mode would have held it back,
then dropped it). With ``ROBOTRULES_AUDIT`` every verdict is also written to
the trail (:mod:`.reporting.audit`), marked ``shadow`` when it was let through.

SPEC 7 (a verdict says why) and 8 (the final gate, here only watched).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals

from scrapy_robotrules.crawl.exceptions import RobotsTxtForbidden, RobotsTxtUnreachable
from scrapy_robotrules.crawl.reporting.audit import AuditTrail
from scrapy_robotrules.crawl.reporting.log import shown
from scrapy_robotrules.engine.robots.decision import Decision

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from scrapy_robotrules.crawl.config.operator import OperatorConfig
    from scrapy_robotrules.crawl.config.policy_lookup import SitePolicies
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.robots.database import RobotRules

__all__ = ["SHADOWED", "Verdicts"]

logger = logging.getLogger(__name__)

SHADOWED = "_robotrules_shadowed"
"""Request meta key: the URL shadow mode let through (the middleware does not decide it again)."""


class Verdicts:
    """The end of every decision of one crawler: enforce or let through, and the audit line."""

    def __init__(
        self,
        crawler: Crawler,
        config: OperatorConfig,
        report: Reporter,
        db: RobotRules,
        policies: SitePolicies | None = None,
    ) -> None:
        self.crawler = crawler
        self.shadow = config.shadow
        self.report = report
        self.db = db
        self.trail: AuditTrail | None = None
        if config.audit is not None:
            self.trail = AuditTrail(
                crawler,
                config.audit,
                cap=config.audit_buffer,
                mode=config.mode,
                db=db,
                report=report,
            )
            self.trail.policies = policies
            report.audit = self.trail
        if self.shadow or self.trail is not None:
            crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    def allowed(self, request: Request, decision: Decision) -> None:
        """An allowed request: its audit line, if there is a trail."""
        if self.trail is not None:
            self.trail.request(request, decision, "allowed")

    def stops(
        self,
        request: Request,
        exc: RobotsTxtForbidden | RobotsTxtUnreachable,
        decision: Decision | None = None,
        *,
        scheduling: bool = False,
    ) -> bool:
        """Whether ``request`` is to be dropped with ``exc`` (enforce mode: the caller drops it).

        In shadow mode it is counted and logged here as enforce mode would
        count it, and more, and let through: ``False``. ``scheduling``: it
        is decided before the scheduler (see :meth:`.Reporter.record_drop`).
        """
        forbidden = isinstance(exc, RobotsTxtForbidden)
        if self.trail is not None:
            if decision is None:
                decision = self._unreachable_decision(request, exc)
            self.trail.request(request, decision, "forbidden" if forbidden else "unreachable")
        if not self.shadow:
            return True
        self.report.record_drop(request, exc, scheduling=scheduling)
        self.report.inc("shadow/would_forbid" if forbidden else "shadow/would_hold")
        logger.debug(
            "Shadow mode: letting %(request)s through (enforce mode would %(would)s it)",
            {"request": shown(request), "would": "forbid" if forbidden else "hold back"},
            extra=self.report.spider,
        )
        request.meta[SHADOWED] = request.url
        return False

    def _unreachable_decision(
        self, request: Request, exc: RobotsTxtForbidden | RobotsTxtUnreachable
    ) -> Decision:
        db = self.db
        note = (
            f"robots.txt unreachable for {exc.seconds:.0f} s ({exc.error})"
            if isinstance(exc, RobotsTxtUnreachable)
            else exc.reason
        )
        return Decision.without_rules(
            request.url, db.agent, db.precedence, db.agent_match, allowed=False, note=note
        )

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.shadow:
            stats = self.crawler.stats

            def value(key: str) -> int:
                return int(stats.get_value(f"robotrules/{key}", 0))

            logger.info(
                "Shadow mode: %(forbid)d requests robots.txt forbids and %(hold)d requests"
                " an unreachable robots.txt holds back were let through"
                " (robotrules/shadow/would_forbid, robotrules/shadow/would_hold)",
                {"forbid": value("shadow/would_forbid"), "hold": value("shadow/would_hold")},
                extra={"spider": spider},
            )
        if self.trail is not None:
            await self.trail.close()
