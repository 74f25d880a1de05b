"""The parts of one crawler's robots.txt handling, built once from its settings, and closed.

:class:`RobotsManager` builds each part and hands it the others it needs
through its constructor; it decides nothing itself. The Scrapy components
(the scheduler, the middlewares, the extension) take the parts they call
from it as they are built:

- the rules database (:class:`~scrapy_robotrules.RobotRules`, over the
  configured store) and the reporter (stats, log lines, summary);
- the fetches (:mod:`.fetches`: one robots.txt per origin, fetched through
  the engine, refreshed and retried as SPEC 8 says) and their per-origin
  state (:mod:`.origins`), fleet leases (:mod:`.leases`), pins
  (:mod:`.pinning`) and tdmrep.json (:mod:`.tdmrep_files`);
- politeness (:mod:`.politeness`: agents, Crawl-delay floors, fleet turns);
- the decider (:mod:`.decider`), the verdicts that follow each decision
  (:mod:`.verdicts`), the answers kept by URL and the carried decisions'
  check (:mod:`.reuse`);
- parking (:mod:`.parking`: requests waiting for their origin's rules).

When the spider closes it cancels the origins' timers, closes the store and
removes the parking's overflow directory.
"""

from __future__ import annotations

import os
import socket
import uuid
from typing import TYPE_CHECKING

from scrapy import signals as scrapy_signals
from scrapy.exceptions import NotConfigured

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.config.operator import operator_config
from scrapy_robotrules.crawl.config.policy_lookup import SitePolicies
from scrapy_robotrules.crawl.config.settings import RobotRulesConfig, crawl_config
from scrapy_robotrules.crawl.deciding.decider import Decider
from scrapy_robotrules.crawl.deciding.reuse import AnswerCache, Carrier
from scrapy_robotrules.crawl.deciding.verdicts import Verdicts
from scrapy_robotrules.crawl.fetching.download import Downloader
from scrapy_robotrules.crawl.fetching.entries import FetchRecorder
from scrapy_robotrules.crawl.fetching.fetches import Fetches
from scrapy_robotrules.crawl.fetching.leases import Leases
from scrapy_robotrules.crawl.fetching.pinning import PinHolds
from scrapy_robotrules.crawl.fetching.tdmrep_files import TdmRepFiles
from scrapy_robotrules.crawl.holding.parking import Parking
from scrapy_robotrules.crawl.pacing.politeness import Politeness
from scrapy_robotrules.crawl.pacing.slotwait import SlotWait
from scrapy_robotrules.crawl.reporting.audit import AuditTrail
from scrapy_robotrules.crawl.reporting.reporter import Reporter
from scrapy_robotrules.engine.database import RobotRules
from scrapy_robotrules.engine.stores import CachedStore
from scrapy_robotrules.engine.usage.preferences import TDM

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from scrapy_robotrules.engine.stores import Entry

__all__ = ["RobotsManager"]

ANSWERS = 4096
"""URLs whose latest answer of the rules is kept, for the same URL offered again."""


class RobotsManager:
    """The robots.txt parts of one crawler, built once and wired through their constructors."""

    _ATTRIBUTE = "_robotrules_manager"

    def __init__(self, crawler: Crawler, config: RobotRulesConfig) -> None:
        operator = operator_config(crawler)  # checked before anything starts
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        self.db = RobotRules(
            config.user_agent,
            config.precedence,
            config.agent_match,
            config.cache_size,
            max_size=config.max_size,
            cache_bytes=config.cache_bytes,
            automaton_bytes=config.automaton_bytes,
            store=config.store,
        )
        self.reporter = Reporter(crawler)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """Who holds this process's fetch leases in the shared store."""
        self.fleet: CachedStore | None = None
        """The shared store, when there is one: fetch leases and fleet-wide pacing."""
        self.leases: Leases | None = None
        if isinstance(self.db.store, CachedStore):
            self.fleet = self.db.store
            self.fleet.on_event = self.reporter.store_event
            # Rules another crawler fetched ask this one for the same pace.
            self.fleet.on_adopt = self._adopted
            self.leases = Leases(
                self.fleet, self.owner, config.lease, lambda: compat.crawl_closing(crawler)
            )
        self.policies = SitePolicies.from_settings(crawler.settings)
        """``ROBOTRULES_POLICIES`` (:mod:`.policy_lookup`): how robots.txt is obeyed, per site."""
        self.audit = AuditTrail.from_config(
            crawler, operator, db=self.db, reporter=self.reporter, policies=self.policies
        )
        """The audit trail (``ROBOTRULES_AUDIT``), given to the parts that write to it."""
        self.politeness = Politeness(
            crawler, config, self.reporter, self.db, self.fleet, policies=self.policies
        )
        download = Downloader(crawler, config, self.reporter)
        self.tdmrep = (
            TdmRepFiles(
                crawler,
                config=config,
                clock=lambda: self.db.clock(),  # noqa: PLW0108  (late: db.clock may be replaced)
                reporter=self.reporter,
                download=download,
                leases=self.leases,
            )
            if TDM in config.purposes
            else None
        )
        """The origins' tdmrep.json, fetched after robots.txt when the crawl declares ``tdm``."""
        self.pins = PinHolds.from_settings(crawler.settings, self.reporter, self.db.store)
        """``ROBOTRULES_PINNED`` (pinning.py): origins held while their file is not pinned."""
        self.fetches = Fetches(
            crawler,
            config,
            self.db,
            reporter=self.reporter,
            download=download,
            recorder=FetchRecorder(self.db, config, self.reporter, self.policies, self.audit),
            politeness=self.politeness,
            leases=self.leases,
            tdmrep=self.tdmrep,
            audit=self.audit,
            pins=self.pins,
        )
        self.origins = self.fetches.origins
        self.slot_wait = self.politeness.slot_wait = SlotWait(crawler, self.fetches)
        """Requests sent back for their wait in their download slots' queues (slotwait.py)."""
        self.parking = Parking(crawler, config, self.reporter, self.origins, self.fetches.closing)
        """Requests waiting, outside the scheduler, for their origin's rules."""
        self.verdicts = Verdicts(crawler, operator, self.reporter, self.db, self.audit)
        """Enforce or shadow mode, and the audit trail (:mod:`.verdicts`, :mod:`.audit`)."""
        self.answers = AnswerCache(ANSWERS)
        """The latest answers by URL (a duplicate offer takes one in the scheduler)."""
        self.carrier = Carrier(self.db, self.politeness, self.tdmrep)
        """Whether a carried decision still holds (the downloader middleware asks)."""
        self.decider = Decider(
            config=config,
            db=self.db,
            fetches=self.fetches,
            politeness=self.politeness,
            policies=self.policies,
            pins=self.pins,
            tdmrep=self.tdmrep,
            answers=self.answers,
            carrier=self.carrier,
            reporter=self.reporter,
            carries_answers=not (
                self.policies.any or self.tdmrep is not None or self.verdicts.trail is not None
            ),
        )
        """The one object that decides requests (:mod:`.decider`)."""
        self.raises_let_through = any(
            getattr(component, "raises_let_through", False) is True
            for component in compat.enabled_components(crawler.settings, "DOWNLOADER_MIDDLEWARES")
        )
        """Whether the downloader middleware is in the crawl, to raise why a request let
        through for its errback was dropped (see ``exceptions.LET_THROUGH``): a downloader
        middleware enabled in ``DOWNLOADER_MIDDLEWARES`` says so by a class attribute of that
        name (this layer sits below the middleware, and imports none)."""
        crawler.signals.connect(self.close, signal=scrapy_signals.spider_closed)

    @classmethod
    def for_component(cls, crawler: Crawler) -> RobotsManager:
        """The manager, for one of the package's Scrapy components (middlewares, extension).

        Each is on only when the crawl obeys robots.txt: without ``ROBOTSTXT_OBEY``,
        ``NotConfigured`` leaves it out of the crawl.
        """
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        return cls.for_crawler(crawler)

    @classmethod
    def for_crawler(cls, crawler: Crawler) -> RobotsManager:
        """The manager of ``crawler``, created (settings checked) on first use."""
        manager = getattr(crawler, cls._ATTRIBUTE, None)
        if not isinstance(manager, RobotsManager):
            with compat.failing_start(crawler):
                manager = cls(crawler, crawl_config(crawler))
            setattr(crawler, cls._ATTRIBUTE, manager)
        return manager

    # Rules another crawler fetched (the shared store).

    def _adopted(self, entry: Entry, previous: Entry | None) -> None:
        self.politeness.note(entry.origin, entry)
        self.fetches.changes.adopted(previous, entry)

    # Reporting.

    @property
    def summary_lines(self) -> list[Callable[[], str | None]]:
        """More lines for the closing summary (the page directives add theirs)."""
        return self.reporter.summary_lines

    def summary(self) -> str:
        """One line on the crawl's robots.txt: origins, fetches, drops, slowest file."""
        return self.reporter.summary(len(self.db))

    def close(self) -> None:
        """Cancel every origin's timers; close the store; remove the overflow directory.

        By now the closing scheduler took what waited there (saved with JOBDIR, else lost).
        Counts the origins left unreachable (``origins/unreachable_at_close``) first.
        """
        self.reporter.set("origins/unreachable_at_close", self.origins.unreachable())
        self.fetches.close()
        self.parking.overflow_dir.remove()
        if self.fleet is not None:
            self.fleet.close()
