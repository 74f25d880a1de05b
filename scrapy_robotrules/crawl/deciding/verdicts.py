"""What follows each decision, in the scheduler and the downloader alike: counted, enforced or let
through in shadow mode, audited.

:meth:`Verdicts.decided` is the one place where a decision (or why none could be had)
becomes its counts, its drop and its audit line; the scheduler (as a request is scheduled)
and the downloader middleware (a request that never met the scheduler, or one decided
again) only say where they stand and what they do with a drop (keep it out of the
scheduler, raise it).

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
from typing import TYPE_CHECKING, Any

from scrapy import signals

from scrapy_robotrules.crawl.exceptions import (
    DropReason,
    RobotsTxtForbidden,
    RobotsTxtNotFetched,
    RobotsTxtUnreachable,
)
from scrapy_robotrules.crawl.reporting.audit import AuditTrail
from scrapy_robotrules.crawl.reporting.log import shown
from scrapy_robotrules.crawl.requestmeta import DECIDED, OFFERED
from scrapy_robotrules.engine.robots.decision import Decision

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from scrapy_robotrules.crawl.config.operator import OperatorConfig
    from scrapy_robotrules.crawl.reporting.audit import AuditTrail
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.database import RobotRules

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
        reporter: Reporter,
        db: RobotRules,
        trail: AuditTrail | None = None,
    ) -> None:
        self.crawler = crawler
        self.shadow = config.shadow
        self.reporter = reporter
        self.db = db
        self.trail = trail
        """The audit trail (``ROBOTRULES_AUDIT``), if any: each verdict's line."""
        if self.shadow or self.trail is not None:
            crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    def offered(self, meta: dict[str, Any], url: str) -> bool:
        """Count a request offered for ``url``, once per URL its lineage reaches (a parked
        request offered again, a retry, is not counted again): whether it was counted."""
        if meta.get(OFFERED) == url:
            return False
        meta[OFFERED] = url
        self.reporter.count("offered")
        return True

    def decided(
        self,
        request: Request,
        verdict: Decision | DropReason,
        *,
        scheduling: bool,
        again: bool = False,
    ) -> DropReason | None:
        """What follows the decision on ``request`` (or why none could be had): why it is to
        be dropped, or ``None`` when it goes on, marked decided for its URL.

        Counts it (``allowed``, or through :meth:`.Reporter.record_drop`), writes its
        audit line and, in shadow mode, lets a drop through (:meth:`stops`).
        ``scheduling``: decided in the scheduler, before it is queued, rather than at
        the downloader. ``again``: a request allowed (and counted) when it was
        scheduled, decided again under newer rules: counted only if they now
        forbid it (moved from allowed to forbidden, so the counts still add up).
        """
        reporter = self.reporter
        decision: Decision | None = None
        reason: DropReason
        if isinstance(verdict, Decision):
            if verdict.allowed:
                if not again:
                    reporter.count("allowed")
                    request.meta[DECIDED] = request.url
                    if self.trail is not None:
                        self.trail.request(request, verdict, "allowed")
                return None
            if again:
                reporter.count("allowed", -1)
            decision, reason = verdict, RobotsTxtForbidden.of(verdict)
        else:
            reason = verdict
        # The crawl closed on it: nothing to enforce or audit, only to count.
        if isinstance(reason, RobotsTxtNotFetched) or self._stops(
            request, reason, decision, scheduling=scheduling
        ):
            reporter.record_drop(request, reason, scheduling=scheduling)
            return reason
        request.meta[DECIDED] = request.url  # shadow mode: let through, counted
        return None

    def _stops(
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
        self.reporter.record_drop(request, exc, scheduling=scheduling)
        self.reporter.inc("shadow/would_forbid" if forbidden else "shadow/would_hold")
        logger.debug(
            "Shadow mode: letting %(request)s through (enforce mode would %(would)s it)",
            {"request": shown(request), "would": "forbid" if forbidden else "hold back"},
            extra=self.reporter.spider,
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
