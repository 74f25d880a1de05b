"""A robots.txt that changes under a crawl: counted, logged, signalled and written down.

When an origin's file is replaced by another file with a different body
(SPEC 8: a refresh, or in a fleet a record another crawler fetched and this
one adopts), the crawler says so once: ``robotrules/changed``, a WARNING
naming the origin and how many ``Allow``/``Disallow`` lines for the crawler's
agent were added and removed (SPEC 3: the groups chosen for it in each file,
``engine.robots.rule_changes``), the ``robotrules_changed`` signal with both files,
and an audit line with both SHA-256 values. Each crawler of a fleet tells of
a change it sees replace the entry it held; an entry it no longer held
(evicted) is replaced unseen. A file that goes (404, a refusal) or comes
after none is no change of file: the fetch's outcome tells of it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.utils.defer import deferred_from_coro

from scrapy_robotrules.crawl import compat, signals
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.robots.rule_changes import FileChange as Change
from scrapy_robotrules.engine.robots.rule_changes import rule_changes

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

    from scrapy_robotrules.crawl.reporting.audit import AuditTrail
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.database import RobotRules
    from scrapy_robotrules.engine.stores import Entry

__all__ = ["Change", "Changes"]

logger = logging.getLogger(__name__)


class Changes:
    """Tells of each file replaced by a different one, in the crawler's stats, log and trail."""

    def __init__(
        self, crawler: Crawler, db: RobotRules, reporter: Reporter, audit: AuditTrail | None = None
    ) -> None:
        self.crawler = crawler
        self.db = db
        self.reporter = reporter
        self.audit = audit
        """The audit trail (``ROBOTRULES_AUDIT``), if any: each change's line."""
        self._sending: set[Deferred[None]] = set()

    def observe(self, origin: str, previous: Entry | None, entry: Entry) -> Change | None:
        """The change ``entry`` makes to ``previous`` (the entry it replaces), told of; or ``None``.

        A change: both are files (``entry`` fetched with rules) whose SHA-256
        differ. Send its signal with :meth:`send`.
        """
        if previous is None or entry.outcome is not Outcome.RULES:
            return None
        old, new = previous.robots, entry.robots
        old_sha, new_sha = previous.sha256, entry.sha256
        if old is None or new is None or old_sha is None or new_sha is None or old_sha == new_sha:
            return None
        db = self.db
        counts = rule_changes(old, new, db.agent, db.agent_match)
        change = Change(origin, old, new, old_sha, new_sha, counts.added, counts.removed)
        self.reporter.inc("changed")
        logger.warning(
            "robots.txt of %(origin)s changed: %(added)d rules added and %(removed)d removed"
            " for %(agent)s (SHA-256 %(old)s to %(new)s)",
            {
                "origin": origin,
                "added": change.added,
                "removed": change.removed,
                "agent": db.agent,
                "old": old_sha[:12],
                "new": new_sha[:12],
            },
            extra=self.reporter.spider,
        )
        if self.audit is not None:
            self.audit.changed(change, db.agent, entry.fetched_at)
        return change

    async def send(self, change: Change, request: Request | None) -> None:
        """``robotrules_changed``, both files; ``request`` made the fetch (``None``: adopted)."""
        await compat.send_signal(
            self.crawler,
            signals.robotrules_changed,
            origin=change.origin,
            old=change.old,
            new=change.new,
            old_sha256=change.old_sha256,
            new_sha256=change.new_sha256,
            added=change.added,
            removed=change.removed,
            request=request,
        )

    def adopted(self, previous: Entry | None, entry: Entry) -> None:
        """A record another crawler fetched replaced ``previous``: told of, its signal sent soon."""
        change = self.observe(entry.origin, previous, entry)
        if change is not None:
            sending = deferred_from_coro(self.send(change, None))
            self._sending.add(sending)
            sending.addBoth(lambda _: self._sending.discard(sending))
