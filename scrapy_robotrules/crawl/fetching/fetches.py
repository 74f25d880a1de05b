"""When robots.txt is fetched: one fetch per origin at a time, refreshes, retries, give-ups.

SPEC 8 over time: an origin's first request starts its fetch (on the loop's
next turn, once whoever asked waits); stale rules start a refresh in the
background; an unreachable robots.txt is fetched again after its back-off
while requests wait, and after ``ROBOTRULES_UNREACHABLE_TIMEOUT`` its waiting
requests are woken to be dropped. A fetch goes through a fleet lease when a
shared store is set, then tdmrep.json follows when the crawl declares ``tdm``.
Each fetch wakes who waits with the origin's new entry, and is told of:
``robotrules_fetched`` and Scrapy's own ``robots_parsed``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import Deferred

from scrapy_robotrules.crawl import compat, signals
from scrapy_robotrules.crawl.exceptions import FetchClosing
from scrapy_robotrules.crawl.fetching.changes import Changes
from scrapy_robotrules.crawl.fetching.origins import Origins, OriginState, wake
from scrapy_robotrules.crawl.reporting.log import counted
from scrapy_robotrules.crawl.robotparser import RobotParser
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotrules.crawl.config.settings import RobotRulesConfig
    from scrapy_robotrules.crawl.fetching.download import Downloader
    from scrapy_robotrules.crawl.fetching.entries import FetchRecorder
    from scrapy_robotrules.crawl.fetching.leases import Leases
    from scrapy_robotrules.crawl.fetching.pinning import PinHolds
    from scrapy_robotrules.crawl.fetching.tdmrep_files import TdmRepFiles
    from scrapy_robotrules.crawl.pacing.politeness import Politeness
    from scrapy_robotrules.crawl.reporting.audit import AuditTrail
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.database import RobotRules
    from scrapy_robotrules.engine.stores import Entry

__all__ = ["Fetches"]

logger = logging.getLogger(__name__)


class Fetches:
    """The robots.txt fetches of one crawler, and the origins they are for."""

    def __init__(
        self,
        crawler: Crawler,
        config: RobotRulesConfig,
        db: RobotRules,
        *,
        reporter: Reporter,
        download: Downloader,
        recorder: FetchRecorder,
        politeness: Politeness,
        leases: Leases | None,
        tdmrep: TdmRepFiles | None,
        audit: AuditTrail | None = None,
        pins: PinHolds | None = None,
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.db = db
        self.reporter = reporter
        self.download = download
        self.recorder = recorder
        self.politeness = politeness
        self.leases = leases
        self.tdmrep = tdmrep
        self.origins = Origins(config.cache_size)
        self.pins = pins
        """``ROBOTRULES_PINNED`` (pinning.py): an origin held by its pin gives up as unreachable."""
        self.audit = audit
        """The audit trail (``ROBOTRULES_AUDIT``), if any: each fetch's line."""
        self.changes = Changes(crawler, db, reporter, audit)
        """A file other than the one it replaces, told of (changes.py)."""
        self._running: set[Deferred[None] | asyncio.Task[None]] = set()
        """The fetches under way (an asyncio loop holds its tasks only weakly)."""

    def closing(self) -> bool:
        """Whether the crawl is stopping or its spider closing: no new fetch or retry starts."""
        return compat.crawl_closing(self.crawler)

    async def fresh_entry(self, origin: str, request: Request) -> Entry | None:
        """The entry of ``origin``, fresh: the one held, else fetched (and waited for) now."""
        entry = self.db.store.get(origin)
        if entry is None or not entry.is_fresh(self.db.clock()):
            state = self.origins.state(origin, request)
            self.start(state, request)
            entry = await self.wait(state)
        return entry

    def start(
        self, state: OriginState, request: Request, *, refresh: bool = False, robots: bool = True
    ) -> None:
        """Start fetching the robots.txt of ``state``, unless a fetch is under way.

        ``robots=False``: only its tdmrep.json is due (see :mod:`.fetching.tdmrep`).
        """
        state.trigger = request
        if state.fetching or self.closing():
            return
        state.fetching = True
        state.robots_due = robots
        if state.retry_call is not None:
            state.retry_call.cancel()
            state.retry_call = None
        if refresh:
            self.reporter.inc("refreshed")
        # On the next turn of the loop, so that whoever asked is waiting
        # before the fetch can end: an asyncio task's first step runs there
        # (no timer and no Deferred around it: either is costly to make, and
        # would be made for every origin); another reactor's Deferred would run at once.
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            compat.call_later(0, self._launch, state)
            return
        task = loop.create_task(self._run_fetch(state))
        self._running.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # A bug: told of as Deferred.fromFuture's unhandled error would be.
            logger.error(
                "Error in the robots.txt fetch task",
                exc_info=task.exception(),
                extra=self.reporter.spider,
            )

    def hold(self, state: OriginState, entry: Entry, now: float, since: float) -> None:
        """Keep an unreachable origin's requests waiting: its next try, its give-up time."""
        if not state.fetching and state.retry_call is None:
            state.retry_call = compat.call_later(entry.fresh_until - now, self._retry, state)
        if state.timeout_call is None:
            wait = since + self.config.unreachable_timeout - now
            state.timeout_call = compat.call_later(wait, self._give_up, state)

    async def wait(self, state: OriginState) -> Entry | None:
        """The entry the origin's current (or next) fetch ends with; ``None``: no rules."""
        waiter: Deferred[Entry | None] = Deferred()
        state.waiters.append(waiter)
        self.reporter.waiting(1)
        try:
            return await maybe_deferred_to_future(waiter)
        finally:
            self.reporter.waiting(-1)
            if waiter in state.waiters:
                state.waiters.remove(waiter)

    def _retry(self, state: OriginState) -> None:
        state.retry_call = None
        if self.closing():
            # No new try once the crawl is stopping: wake who waits (parked
            # requests are saved or counted lost, the others dropped).
            waiters, state.waiters = state.waiters, []
            wake(waiters, None)
            return
        if state.waiters:
            self.start(state, state.trigger)

    def _give_up(self, state: OriginState) -> None:
        state.timeout_call = None
        held = self.pins.held(state.name) if self.pins is not None else None
        outage = state.outage or held
        if outage is not None:
            # Timers run on the loop's clock, the database on the wall clock.
            left = outage.since + self.config.unreachable_timeout - self.db.clock()
            if left > 0:
                state.timeout_call = compat.call_later(left, self._give_up, state)
                return
        waiters, state.waiters = state.waiters, []
        if waiters:
            pinned = state.outage is None and held is not None
            logger.warning(
                "robots.txt %(what)s: dropping %(requests)s for %(origin)s,"
                " parked for %(timeout)s s (%(error)s)",
                {
                    "what": "differs from its pin" if pinned else "unreachable",
                    "requests": counted(len(waiters), "request"),
                    "origin": state.name,
                    "timeout": self.config.unreachable_timeout,
                    "error": held.reason if pinned and held else state.last_error or "no answer",
                },
                extra=self.reporter.spider,
            )
        wake(waiters, self.db.entry(state.robots_url))
        if not state.waiters and state.retry_call is not None:
            state.retry_call.cancel()
            state.retry_call = None
        self.origins.forget_if_idle(state)

    def _launch(self, state: OriginState) -> None:
        running = deferred_from_coro(self._run_fetch(state))
        self._running.add(running)
        running.addBoth(lambda _: self._running.discard(running))

    async def _run_fetch(self, state: OriginState) -> None:
        entry: Entry | None = None
        try:
            if not state.robots_due:
                entry = self.db.entry(state.robots_url)
            elif self.leases is not None:
                entry = await self._fleet_fetch(state, self.leases)
            else:
                entry = await self._fetch_and_store(state)
            # tdmrep.json next, when due and robots.txt lets some request through.
            deciding = entry is not None and (
                entry.robots is not None or entry.outcome is Outcome.ALLOW_ALL
            )
            if deciding and self.tdmrep is not None and self.tdmrep.due(state.name):
                await self.tdmrep.fetch(state.name, state.trigger)
        except FetchClosing:
            pass  # the waiters wake without rules: saved, lost or dropped as the crawl closes
        finally:
            state.fetching = False
            waiters, state.waiters = state.waiters, []
            wake(waiters, entry)
            self.origins.forget_if_idle(state)

    async def _fleet_fetch(self, state: OriginState, leases: Leases) -> Entry:
        """Fetch under the origin's lease, or take what the lease holder fetched."""
        fleet = leases.fleet
        entry = await leases.take_or_wait(state.name, lambda: fleet.refresh(state.name))
        if entry is not None:
            self.reporter.inc("fleet/waited")
            self.recorder.adopt(state, entry)
            return entry
        with leases.held(state.name):
            return await self._fetch_and_store(state)

    async def _fetch_and_store(self, state: OriginState) -> Entry:
        trigger = state.trigger
        started = time.monotonic()
        previous: Entry | None = None
        try:
            fetched = await self.download.download(state.robots_url, trigger)
            previous = self.db.entry(state.robots_url)
            entry = self.recorder.store(state, fetched)
        except FetchClosing:
            raise
        except Exception as exc:  # a bug, not the network: still never "allow all"
            logger.error(
                "Error fetching %(url)s",
                {"url": state.robots_url},
                exc_info=True,
                extra=self.reporter.spider,
            )
            detail = f"{type(exc).__name__}: {exc}"
            entry = self.recorder.unreachable(state, None, state.robots_url, detail)
        seconds = time.monotonic() - started
        self.reporter.fetched(seconds, state.robots_url, len(self.db), self.db.evicted)
        if self.audit is not None:
            self.audit.fetched(state.name, entry, seconds, state.last_error)
        change = self.changes.observe(state.name, previous, entry)
        politeness = self.politeness
        if politeness.note(state.name, entry):
            politeness.apply_crawl_delay(state.trigger)
            if politeness.fleet is not None:
                # The robots.txt request itself was the origin's latest visit.
                politeness.fleet.reserve(state.name, politeness.crawl_delay(trigger) or 0.0)
        await self._send_signals(state.name, entry, trigger)
        if change is not None:
            await self.changes.send(change, trigger)
        return entry

    async def _send_signals(self, origin: str, entry: Entry, trigger: Request) -> None:
        """``robots_parsed`` (Scrapy's, for fetched rules) and ``robotrules_fetched``."""
        fetched_robots = entry.robots if entry.outcome is Outcome.RULES else None
        if fetched_robots is not None and compat.ROBOTS_PARSED is not None:
            db = self.db
            parser = RobotParser(
                fetched_robots, precedence=db.precedence, agent_match=db.agent_match
            )
            await compat.send_signal(
                self.crawler, compat.ROBOTS_PARSED, robotparser=parser, request=trigger
            )
        await compat.send_signal(
            self.crawler,
            signals.robotrules_fetched,
            origin=origin,
            robots=fetched_robots,
            outcome=entry.outcome,
            status=entry.status,
            request=trigger,
        )

    def close(self) -> None:
        """Cancel the timers of every origin (the spider is closed)."""
        self.origins.close()
