"""One robots.txt per origin, fetched through the engine, and a decision for every request.

This is SPEC 8 for a running crawl, kept apart from the middleware so that any Scrapy
component can ask for decisions: :meth:`RobotsManager.decide` waits for an origin's
rules, :meth:`RobotsManager.decide_now` never waits. The manager decides and
coordinates single-job parts, which return values and never call back up: per-origin
state (:mod:`.origins`), when to fetch (:mod:`.fetches`), downloads with redirects
(:mod:`.download`), what a fetch means (:mod:`.entries`), fleet leases (:mod:`.leases`),
politeness (:mod:`.politeness`), parking (:mod:`.parking`), reporting (:mod:`.reporting`),
what a request carries (:mod:`.requestmeta`), whether a carried decision
still holds (:mod:`.reuse`) and the exceptions (:mod:`.exceptions`).

Per origin (scheme, host, port) at most one fetch runs at a time; requests
that need its rules wait on it. After a fetch:

- rules, no robots.txt (4xx) or a refusal (401/403 with
  ``ROBOTRULES_UNAUTHORIZED = "disallow"``): kept in the crawler's
  :class:`~scrapy_robotrules.RobotRules` until they go stale, then fetched
  again in the background while the stale rules go on deciding;
- unreachable (429, 5xx, network errors): requests are held and robots.txt
  is fetched again with back-off (``ROBOTRULES_RETRY_DELAY``, doubling, at
  most 600 s); rules fetched earlier, if any, decide meanwhile. An origin
  unreachable for ``ROBOTRULES_UNREACHABLE_TIMEOUT`` seconds has its held
  requests dropped with :class:`RobotsTxtUnreachable`, as are its new ones
  until a fetch succeeds.

A request is decided once: its decision carries the generation of its rules
(:mod:`.requestmeta`) and holds while they do; a URL offered again takes it too.
The time of day (fetched when, fresh until, unreachable since) is read from
``self.db.clock`` alone; timers run on the loop's clock.
"""

from __future__ import annotations

import os
import re
import socket
import uuid
from typing import TYPE_CHECKING

from scrapy import signals as scrapy_signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.config.operator import operator_config
from scrapy_robotrules.crawl.config.policy_lookup import SitePolicies, adjusted
from scrapy_robotrules.crawl.config.settings import RobotRulesConfig, crawl_config
from scrapy_robotrules.crawl.deciding.reuse import AnswerCache, Carrier
from scrapy_robotrules.crawl.deciding.verdicts import Verdicts
from scrapy_robotrules.crawl.exceptions import (
    RobotsTxtNotFetched,
    RobotsTxtUnreachable,
)
from scrapy_robotrules.crawl.fetching.download import Downloader
from scrapy_robotrules.crawl.fetching.entries import FetchRecorder
from scrapy_robotrules.crawl.fetching.fetches import Fetches
from scrapy_robotrules.crawl.fetching.leases import Leases
from scrapy_robotrules.crawl.fetching.pinning import Held, PinHolds
from scrapy_robotrules.crawl.fetching.tdmrep_files import TdmRepFiles
from scrapy_robotrules.crawl.holding.parking import Parking
from scrapy_robotrules.crawl.pacing.politeness import Politeness
from scrapy_robotrules.crawl.pacing.slotwait import SlotWait
from scrapy_robotrules.crawl.reporting.audit import AuditTrail
from scrapy_robotrules.crawl.reporting.reporter import Reporter
from scrapy_robotrules.crawl.requestmeta import (
    STALE,
    Carried,
    carried_in,
    carry,
    origin_for,
)
from scrapy_robotrules.engine.database import RobotRules
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt, is_robots_path
from scrapy_robotrules.engine.robots.urls import request_path
from scrapy_robotrules.engine.stores import CachedStore
from scrapy_robotrules.engine.usage.preferences import TDM, refuse_purposes

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotrules.engine.stores import Entry

__all__ = ["RobotsManager"]

_UNCHECKED_SCHEMES = ("data", "file")
ANSWERS = 4096
"""URLs whose latest answer of the rules is kept, for the same URL offered again."""
_HOST_FOLLOWS = re.compile(r"https?://[a-zA-Z0-9]")
"""An http(s) URL whose host name starts right after ``//`` (no user info, no brackets)."""
_EMPTY = RobotsTxt.parse(b"")


def _may_be_robots_path(url: str) -> bool:
    """Whether the path of ``url`` may be /robots.txt (percent-encoded letters included)."""
    return "/robots.txt" in url or "%" in url


class RobotsManager:
    """robots.txt for one crawler: the rules database, the fetches, the decisions, the stats."""

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
        self.politeness = Politeness(crawler, config, self.reporter, self.db, self.fleet)
        self.politeness.policies = self.policies
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
        )
        self.origins = self.fetches.origins
        self.slot_wait = self.politeness.slot_wait = SlotWait(crawler, self.fetches)
        """Requests sent back for their wait in their download slots' queues (slotwait.py)."""
        self.pins = PinHolds.from_settings(crawler.settings, self.reporter, self.db.store)
        """``ROBOTRULES_PINNED`` (pinning.py): origins held while their file is not pinned."""
        self.fetches.pins = self.pins
        self.parking = Parking(crawler, config, self.reporter)
        self.verdicts = Verdicts(crawler, operator, self.reporter, self.db, self.audit)
        """Enforce or shadow mode, and the audit trail (:mod:`.shadow`, :mod:`.audit`)."""
        self.answers = AnswerCache(ANSWERS)
        """The latest answers by URL (a duplicate offer takes one at the gate)."""
        self.carrier = Carrier(self.db, self.politeness, self.tdmrep)
        """Whether a carried decision still holds (the downloader middleware asks)."""
        self._carries_answers = not (
            self.policies.any or self.tdmrep is not None or self.verdicts.trail is not None
        )
        """Whether an allowed answer holds for a duplicate as it is: not when a site policy,
        a tdmrep.json or the audit trail has its own say on each request."""
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

    # Deciding.

    def checks(self, request: Request) -> bool:
        """Whether robots.txt has a say on ``request`` at all."""
        if request.meta.get("dont_obey_robotstxt"):
            return False
        url = request.url
        if _HOST_FOLLOWS.match(url) and "@" not in url and "[" not in url:
            return True  # the common case, without parsing the URL
        parsed = urlparse_cached(request)
        return parsed.scheme not in _UNCHECKED_SCHEMES and bool(parsed.hostname)

    def decide_now(self, request: Request) -> Decision | None:
        """The decision on ``request`` if it can be made now, else ``None``.

        ``None`` means the origin's rules are not at hand: their fetch is
        started (or under way), and :meth:`decide` would wait for it.
        Raises :class:`RobotsTxtUnreachable` when the origin has been
        unreachable for longer than ``ROBOTRULES_UNREACHABLE_TIMEOUT``.
        """
        url = request.url
        if _may_be_robots_path(url) and is_robots_path(request_path(url)):
            return self._robots_path_decision(url)
        origin = origin_for(request)
        return self._decide(origin, url, request, self.db.store.get(origin))

    async def decide(self, request: Request) -> Decision:
        """The decision on ``request``, once its origin's rules are at hand.

        Fresh rules decide at once; stale rules decide while fresh ones are
        fetched in the background; with none, this waits for the fetch.
        Raises :class:`RobotsTxtUnreachable` as :meth:`decide_now` does,
        including for requests parked until the timeout passed.
        """
        url = request.url
        if _may_be_robots_path(url) and is_robots_path(request_path(url)):
            return self._robots_path_decision(url)
        origin = origin_for(request)
        entry = self.db.store.get(origin)
        while True:
            decision = self._decide(origin, url, request, entry)
            if decision is not None:
                return decision
            if self.closing():
                raise RobotsTxtNotFetched(origin)
            # What woke this request is the entry to decide with, even if the
            # database has dropped it again since (eviction).
            state = self.origins.get(origin)
            assert state is not None  # _decide made it, to fetch or to wait
            entry = await self.fetches.wait(state)

    def refresh_due(self, request: Request) -> bool:
        """Whether the rules of ``request``'s origin must be fetched before it is decided again.

        So when none are at hand (evicted, or a request resumed from ``JOBDIR``
        in a new process) or they went past their age since it was decided:
        RFC 9309 2.4 lets a crawler use a file for at most that long. The
        fetch is started then. Not for a request the stale rules decided
        while they were fetched again (:data:`.STALE`, SPEC 8), nor for
        /robots.txt itself, nor for an origin a site policy decides without
        its file (:mod:`.policy_lookup`).
        """
        url = request.url
        if request.meta.get(STALE) == url:
            return False
        if _may_be_robots_path(url) and is_robots_path(request_path(url)):
            return False
        origin = origin_for(request)
        if self.policies.any:
            policy = self.policies.for_origin(origin)
            if policy is not None and (policy.ignore or policy.robots_txt is not None):
                return False
        entry = self.db.store.get(origin)
        if entry is not None and entry.is_fresh(self.db.clock()):
            return False
        refresh = entry is not None and (
            entry.outcome is not Outcome.UNREACHABLE or entry.robots is not None
        )
        self.fetches.start(self.origins.state(origin, request), request, refresh=refresh)
        return True

    def decide_fresh_now(self, request: Request) -> Decision | None:
        """:meth:`decide_now`, but neither rules past their age nor the very rules it was allowed
        under, while their next fetch runs, decide: ``None``, the fetch started.

        For a request whose allowed decision is made again (:data:`.AGAIN`):
        it waits, parked, for its origin's next file.
        """
        if self.refresh_due(request):
            return None
        carried = carried_in(request.meta)
        if carried is not None and carried.url == request.url and self.carrier.same_entry(carried):
            state = self.origins.get(carried.origin)
            if state is not None and state.fetching:
                return None  # sent back for its wait in its slot's queue (slotwait.py)
        return self.decide_now(request)

    def _robots_path_decision(self, url: str) -> Decision:
        # SPEC 4: /robots.txt itself is always allowed; no need to wait for it.
        return _EMPTY.explain(url, self.db.agent, self.db.precedence, self.db.agent_match)

    def _decide(
        self, origin: str, url: str, request: Request, entry: Entry | None
    ) -> Decision | None:
        """The decision, or ``None`` (fetch started); carried in ``request.meta`` either way."""
        meta = request.meta
        policy = self.policies.for_origin(origin) if self.policies.any else None
        if policy is not None and (policy.ignore or policy.robots_txt is not None):
            carry(meta, Carried.undecided(url, origin))
            db = self.db
            agent = self.politeness.agent(request)
            return self.policies.without_fetch(
                policy, request, origin, agent=agent, db=db, reporter=self.reporter
            )
        if entry is None:
            carry(meta, Carried.undecided(url, origin))
            self.fetches.start(self.origins.state(origin, request), request)
            return None
        db = self.db
        now = db.clock()
        stale = not entry.is_fresh(now)
        if entry.outcome is not Outcome.UNREACHABLE or entry.robots is not None:
            if self.pins is not None and (held := self.pins.check(origin, entry, now)):
                self._hold(origin, request, entry, held.since, held)
                return None
            if stale:
                self.fetches.start(self.origins.state(origin, request), request, refresh=True)
                meta[STALE] = url  # decided by the stale rules while they are fetched again
            agent = self.politeness.agent(request)
            decision = self.answers.get(url, entry, agent)
            if decision is None:
                asked, precedence, match = agent, db.precedence, db.agent_match
                if policy is not None:  # a site policy: another agent, precedence, matching
                    asked, precedence, match = policy.choose(agent, precedence, match)
                decision = entry.explain(url, asked, precedence, match)
                skipped = self.politeness.skipped.get(origin)
                if skipped is not None or policy is not None:  # a site policy
                    decision = adjusted(decision, policy, skipped)
                # --- usage preferences (usage.py): a purpose robots.txt refuses drops it.
                if self.config.purposes and decision.allowed and entry.robots is not None:
                    decision = refuse_purposes(entry.robots, decision, self.config.purposes)
                again = self._carries_answers and decision.allowed and agent is self.db.agent
                self.answers.put(url, origin, entry, agent, decision, again=again)
            tdm_at = None
            if self.tdmrep is not None and decision.allowed:  # tdmrep_files
                tdm = self.tdmrep.entry(origin)
                if tdm is None or not tdm.is_fresh(now):
                    self.fetches.start(self.origins.state(origin, request), request, robots=False)
                if tdm is None:
                    carry(meta, Carried.undecided(url, origin))
                    return None  # waits for the origin's tdmrep.json, as for its robots.txt
                decision = self.tdmrep.refuse(tdm, decision)
                tdm_at = tdm.fetched_at
            # --- end usage preferences
            if decision.allowed:
                carry(meta, Carried(url, origin, entry.fetched_at, entry.generation, tdm_at, agent))
            else:
                carry(meta, Carried.undecided(url, origin))
            return decision
        # Unreachable and no earlier rules: the origin is disallowed for now.
        outage = self.origins.state(origin, request).outage
        since = outage.since if outage is not None else entry.fetched_at
        self._hold(origin, request, entry, since)
        return None

    def _hold(
        self, origin: str, request: Request, entry: Entry, since: float, pin: Held | None = None
    ) -> None:
        """Hold ``request``: its origin is unreachable, or (``pin``) its file is not the pinned one.
        Dropped when held for ``ROBOTRULES_UNREACHABLE_TIMEOUT``, as new ones then."""
        carry(request.meta, Carried.undecided(request.url, origin))
        state = self.origins.state(origin, request)
        state.trigger = request  # what the next retry copies meta from
        now = self.db.clock()
        if not entry.is_fresh(now):  # even past the timeout: it may be back
            self.fetches.start(state, request, refresh=pin is not None)
        if now - since >= self.config.unreachable_timeout:
            if pin is not None:
                raise pin.dropped(origin, now - since)
            raise RobotsTxtUnreachable(origin, now - since, state.last_error or "no answer")
        self.fetches.hold(state, entry, now, since)

    # Parking: requests whose origin has no rules yet wait outside the
    # scheduler and the downloader, so they hold no concurrency slot.

    def park(self, request: Request) -> bool:
        """Hold ``request`` until its origin's robots.txt fetch ends, then offer it again.

        Call after :meth:`decide_now` returned ``None`` (which started the
        fetch). The request goes back through ``engine.crawl`` once the fetch
        ends or the origin's unreachable timeout passes. Past
        ``ROBOTRULES_MAX_WAITING_PER_ORIGIN`` parked requests for the origin,
        it waits on disk (:mod:`.overflow`): no memory or download place for it.
        ``False`` (not parked) once the crawl is closing: see :meth:`hand_over`.
        """
        state = self.origins.get(origin_for(request))
        return self.parking.park(request, state, self.closing())

    def hand_over(self, request: Request) -> None:
        """A request offered while the crawl closes: see :meth:`.Parking.hand_over`."""
        self.parking.hand_over(request, origin_for(request))

    def take_parked(self) -> list[Request]:
        """Every parked request, no longer parked: see :meth:`.Parking.take_parked`."""
        return self.parking.take_parked()

    def parked(self) -> int:
        """How many requests are parked in memory."""
        return len(self.parking)

    def pending(self) -> bool:
        """Whether requests are parked or robots.txt fetches are under way."""
        return self.parking.pending() or self.origins.fetching()

    def closing(self) -> bool:
        """Whether the crawl is stopping or its spider closing: no new fetch or retry starts."""
        return self.fetches.closing()

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
