"""One robots.txt per origin, fetched through the engine, and a decision for every request.

This is SPEC 8 for a running crawl, kept apart from the middleware so that
any Scrapy component can ask for decisions: :meth:`RobotsManager.decide`
waits for an origin's rules, :meth:`RobotsManager.decide_now` never waits.

Per origin (scheme, host, port) there is at most one fetch at a time, and
every request that needs that origin's rules waits on it, then gets the
decision of the file itself. After a fetch:

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

What the fetch outcomes mean comes from :mod:`.fetch_policy` only.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import time
import uuid
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urljoin, urlsplit

from scrapy import Request
from scrapy import signals as scrapy_signals
from scrapy.exceptions import IgnoreRequest
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred, DeferredSemaphore
from w3lib.url import safe_url_string

from . import compat, signals
from .cached_store import CachedStore
from .database import RobotRules
from .directives import RequestRate
from .fetch_policy import (
    MAX_REDIRECTS,
    Outcome,
    freshness_lifetime,
    outcome_for_status,
    retry_delay,
)
from .robotparser import RobotParser
from .robotstxt import Decision, RobotsTxt, is_robots_path
from .settings import MAX_RETRY_DELAY, RobotRulesConfig
from .urls import origin_of, request_path

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from .stores import Entry

__all__ = ["ROBOTS_PRIORITY", "RobotsManager", "RobotsTxtUnreachable"]

logger = logging.getLogger(__name__)

ROBOTS_PRIORITY = 1000
"""Priority of robots.txt requests, as Scrapy's own middleware gives them."""

STATS_PREFIX = "robotrules/"
DOWNLOAD_SIZE_FACTOR = 10
"""A robots.txt body, decompressed, may be this many times ROBOTRULES_MAX_SIZE before
the download is refused (``download_maxsize``): beyond, it counts as unreachable."""
_UNCHECKED_SCHEMES = ("data", "file")
_EMPTY = RobotsTxt.parse(b"")


class RobotsTxtForbidden(IgnoreRequest):
    """A request dropped because its origin's robots.txt disallows it; ``reason`` says by what."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"Forbidden by robots.txt: {reason}")

    def __reduce__(self) -> tuple[type[RobotsTxtForbidden], tuple[str]]:
        # Kept in request meta, which JOBDIR crawls pickle.
        return type(self), (self.reason,)


class RobotsTxtUnreachable(IgnoreRequest):
    """A request dropped because its origin's robots.txt stayed unreachable too long."""

    def __init__(self, origin: str, seconds: float, error: str) -> None:
        self.origin = origin
        self.seconds = seconds
        self.error = error
        super().__init__(
            f"robots.txt unreachable: {origin}/robots.txt has failed"
            f" for {seconds:.1f} s (last: {error})"
        )

    def __reduce__(self) -> tuple[type[RobotsTxtUnreachable], tuple[str, float, str]]:
        # Kept in request meta, which JOBDIR crawls pickle.
        return type(self), (self.origin, self.seconds, self.error)


MAX_REBOOKINGS = 3
LATE_SHARE = 0.05
"""A request woken later than this share of its origin's delay after its fleet
turn books another turn (at most ``MAX_REBOOKINGS`` times) instead of going."""
FLEET_POLL_FIRST = 0.05
FLEET_POLL_MAX = 1.0
"""Seconds between looks at the shared store while another crawler fetches: doubling."""


def _slot_gap(slot: Slot | None, crawler: Crawler) -> float:
    """The longest gap a download slot may put between two requests (random delays included)."""
    if slot is not None:
        return float(slot.delay) * (1.0 + compat.slot_jitter(slot))
    # No slot yet: the downloader will make one with these settings.
    settings = crawler.settings
    return settings.getfloat("DOWNLOAD_DELAY") * (1.0 + compat.default_jitter(settings))


def _own_allowance(crawler: Crawler) -> AbstractContextManager[None]:
    """A robots.txt fetch takes no ``CONCURRENT_REQUESTS`` place from the pages.

    ``engine.download_async`` sends it at once, but counts it among the
    downloader's active requests, which the scheduler must wait for: a few
    slow or dead robots.txt files would then hold the crawl's places for up
    to ``DOWNLOAD_TIMEOUT`` (times Scrapy's retries), while the requests that
    wait for them are parked and hold none. So the downloader's limit is
    raised by one for each fetch under way; ``ROBOTRULES_CONCURRENT_FETCHES``
    bounds how many are.
    """
    return compat.extra_download_place(compat.downloader(crawler))


SLOW_FETCH = 5.0
"""Seconds after which a robots.txt fetch gives its place up to the next one.

Places bound how many fetches start at once; a slow or dead robots.txt
(which may run for ``DOWNLOAD_TIMEOUT`` times Scrapy's retries) must not
hold one so long that the other sites' robots.txt wait behind it."""


class _Place:
    """A fetch place, given back at the end of the fetch or after SLOW_FETCH seconds."""

    def __init__(self, places: DeferredSemaphore) -> None:
        self.places: DeferredSemaphore | None = places
        self.call = compat.call_later(SLOW_FETCH, self.give_up)

    def give_up(self) -> None:
        if self.places is not None:
            self.places.release()
            self.places = None
            self.call.cancel()


class _Renewal:
    """Keeps a fetch lease alive while the fetch runs: renewed every third of its length."""

    def __init__(self, fleet: CachedStore, origin: str, owner: str, seconds: float) -> None:
        self.fleet, self.origin, self.owner, self.seconds = fleet, origin, owner, seconds
        self.call: compat.Timer | None = compat.call_later(seconds / 3, self.renew)

    def renew(self) -> None:
        self.fleet.lease(self.origin, self.owner, self.seconds)
        self.call = compat.call_later(self.seconds / 3, self.renew)

    def stop(self) -> None:
        if self.call is not None:
            self.call.cancel()
            self.call = None


class _Politeness(NamedTuple):
    """What an origin's rules ask of the crawler's pace."""

    crawl_delay: float | None
    rate: RequestRate | None

    def delay(self, now: dt.datetime) -> float:
        delays = [self.crawl_delay or 0.0]
        if self.rate is not None and (self.rate.window is None or now in self.rate.window):
            delays.append(self.rate.delay)
        return max(delays)


class _Fetched(NamedTuple):
    """How a fetch ended: the final response, or the error that stopped it."""

    response: Response | None
    url: str
    error: BaseException | None


class _Origin:
    """The fetch state of one origin: the fetch under way, who waits, how it failed."""

    __slots__ = (
        "failures",
        "fetching",
        "last_error",
        "name",
        "parked",
        "retry_call",
        "robots_url",
        "timeout_call",
        "trigger",
        "unreachable_since",
        "waiters",
    )

    def __init__(self, name: str, trigger: Request) -> None:
        self.name = name
        self.robots_url = f"{name}/robots.txt"
        self.trigger = trigger
        """The latest request that needed this origin: robots.txt fetches copy its meta."""
        self.fetching = False
        self.waiters: list[Deferred[Entry | None]] = []
        self.parked = 0
        """How many of the waiters are parked requests (outside scheduler and downloader)."""
        self.failures = 0
        self.unreachable_since: float | None = None
        self.last_error = ""
        self.retry_call: compat.Timer | None = None
        self.timeout_call: compat.Timer | None = None

    @property
    def idle(self) -> bool:
        return not (self.fetching or self.waiters or self.retry_call or self.timeout_call)

    def cancel_timers(self) -> None:
        for call in (self.retry_call, self.timeout_call):
            if call is not None:
                call.cancel()
        self.retry_call = self.timeout_call = None


class RobotsManager:
    """robots.txt for one crawler: the rules database, the fetches, the decisions, the stats."""

    _ATTRIBUTE = "_robotrules_manager"

    def __init__(self, crawler: Crawler, config: RobotRulesConfig) -> None:
        self.crawler = crawler
        self.config = config
        self.stats: StatsCollector = crawler.stats
        self.db = RobotRules(
            config.user_agent,
            config.precedence,
            config.agent_match,
            config.cache_size,
            max_size=config.max_size,
            store=config.store,
        )
        self.fleet: CachedStore | None = None
        """The shared store, when there is one: fetch leases and fleet-wide pacing."""
        if isinstance(self.db.store, CachedStore):
            self.fleet = self.db.store
            self.fleet.on_event = self._store_event
            # Rules another crawler fetched ask this one for the same pace.
            self.fleet.on_adopt = lambda entry: self._note_politeness(entry.origin, entry)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """Who holds this process's fetch leases in the shared store."""
        self.fetches = 0
        """robots.txt fetches completed, whatever their outcome."""
        self.slowest: tuple[float, str] | None = None
        """The longest fetch so far: seconds, robots.txt URL."""
        self._origins: dict[str, _Origin] = {}
        self._politeness: dict[str, _Politeness] = {}
        self._running: set[Deferred[None]] = set()
        self._waiting = 0
        self._parked: dict[int, Request] = {}
        """Parked requests by the id of their waiter."""
        self._scheduler_closed = False
        self._fetch_places = DeferredSemaphore(config.concurrent_fetches)
        """robots.txt downloads under way at once; more wait here, outside the downloader."""
        limit = DOWNLOAD_SIZE_FACTOR * config.max_size
        scrapy_limit = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self._download_maxsize = min(limit, scrapy_limit) if scrapy_limit > 0 else limit
        """Bytes a robots.txt download (or decompression) may reach before it is refused."""
        crawler.signals.connect(self.close, signal=scrapy_signals.spider_closed)

    @classmethod
    def for_crawler(cls, crawler: Crawler) -> RobotsManager:
        """The manager of ``crawler``, created (settings checked) on first use."""
        manager = getattr(crawler, cls._ATTRIBUTE, None)
        if not isinstance(manager, RobotsManager):
            with compat.failing_start(crawler):
                manager = cls(crawler, RobotRulesConfig.from_crawler(crawler))
            setattr(crawler, cls._ATTRIBUTE, manager)
        return manager

    # Deciding.

    def checks(self, request: Request) -> bool:
        """Whether robots.txt has a say on ``request`` at all."""
        if request.meta.get("dont_obey_robotstxt"):
            return False
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
        if is_robots_path(request_path(url)):
            return self._robots_path_decision(url)
        return self._decide(origin_of(url), url, request, self.db.entry(url))

    async def decide(self, request: Request) -> Decision:
        """The decision on ``request``, once its origin's rules are at hand.

        Fresh rules decide at once; stale rules decide while fresh ones are
        fetched in the background; with none, this waits for the fetch.
        Raises :class:`RobotsTxtUnreachable` as :meth:`decide_now` does,
        including for requests held until the timeout passed.
        """
        url = request.url
        if is_robots_path(request_path(url)):
            return self._robots_path_decision(url)
        origin = origin_of(url)
        entry = self.db.entry(url)
        while True:
            decision = self._decide(origin, url, request, entry)
            if decision is not None:
                return decision
            # What woke this request is the entry to decide with, even if the
            # database has dropped it again since (eviction).
            entry = await self._wait(self._origins[origin])

    # Parking: requests whose origin has no rules yet wait outside the
    # scheduler and the downloader, so they hold no concurrency slot.

    def park(self, request: Request) -> bool:
        """Hold ``request`` until its origin's robots.txt fetch ends, then offer it again.

        Call after :meth:`decide_now` returned ``None`` (which started the
        fetch). The request goes back through ``engine.crawl``, to be decided
        then, once the fetch ends or the origin's unreachable timeout passes.
        ``False`` (not parked) when the origin already has
        ``ROBOTRULES_MAX_WAITING_PER_ORIGIN`` parked requests: the caller lets
        it into the scheduler, and the middleware makes it wait there.
        """
        state = self._origins.get(origin_of(request.url))
        if (
            state is None
            or state.parked >= self.config.max_waiting_per_origin
            or self._scheduler_closed
        ):
            return False
        waiter: Deferred[Entry | None] = Deferred()
        state.waiters.append(waiter)
        state.parked += 1
        self._parked[id(waiter)] = request
        self._waiting += 1
        self.stats.max_value(f"{STATS_PREFIX}waiting/max", self._waiting)

        def offer_again(_: Entry | None) -> None:
            state.parked -= 1
            self._waiting -= 1
            if self._parked.pop(id(waiter), None) is None:
                return  # taken by a closing scheduler
            engine = compat.engine(self.crawler)
            if engine is None or engine.spider is None:
                # The crawl is over; nothing can take it any more.
                self.count("lost_at_close")
                logger.warning(
                    "Dropped %(request)s: the crawl ended while it waited for robots.txt",
                    {"request": request},
                    extra={"spider": self.crawler.spider},
                )
                return
            engine.crawl(request)

        waiter.addCallback(offer_again)
        return True

    def pending(self) -> bool:
        """Whether requests are parked or robots.txt fetches are under way."""
        return bool(self._parked) or any(s.fetching for s in self._origins.values())

    def take_parked(self) -> list[Request]:
        """Every parked request, no longer parked: for a scheduler about to close."""
        requests = list(self._parked.values())
        self._parked.clear()
        # No more parking: a request parked now would outlive the scheduler.
        self._scheduler_closed = True
        return requests

    def _robots_path_decision(self, url: str) -> Decision:
        # SPEC 4: /robots.txt itself is always allowed; no need to wait for it.
        return _EMPTY.explain(url, self.db.agent, self.db.precedence, self.db.agent_match)

    def _state(self, origin: str, request: Request) -> _Origin:
        state = self._origins.get(origin)
        if state is None:
            state = self._origins[origin] = _Origin(origin, request)
        return state

    def _decide(
        self, origin: str, url: str, request: Request, entry: Entry | None
    ) -> Decision | None:
        if entry is None:
            self._fetch(self._state(origin, request), request)
            return None
        now = self.db.clock()
        stale = not entry.is_fresh(now)
        if entry.outcome is not Outcome.UNREACHABLE or entry.robots is not None:
            if stale:
                self._fetch(self._state(origin, request), request, refresh=True)
            return entry.explain(url, self.db.agent, self.db.precedence, self.db.agent_match)
        # Unreachable and no earlier rules: the origin is disallowed for now.
        state = self._state(origin, request)
        state.trigger = request  # what the next retry copies meta from
        since = state.unreachable_since if state.unreachable_since is not None else entry.fetched_at
        if stale:
            self._fetch(state, request)  # even past the timeout: it may be back
        if now - since >= self.config.unreachable_timeout:
            raise RobotsTxtUnreachable(origin, now - since, state.last_error or "no answer")
        if not state.fetching and state.retry_call is None:
            state.retry_call = compat.call_later(entry.fresh_until - now, self._retry, state)
        if state.timeout_call is None:
            wait = since + self.config.unreachable_timeout - now
            state.timeout_call = compat.call_later(wait, self._give_up, state)
        return None

    async def _wait(self, state: _Origin) -> Entry | None:
        waiter: Deferred[Entry | None] = Deferred()
        state.waiters.append(waiter)
        self._waiting += 1
        self.stats.max_value(f"{STATS_PREFIX}waiting/max", self._waiting)
        try:
            return await maybe_deferred_to_future(waiter)
        finally:
            self._waiting -= 1
            if waiter in state.waiters:
                state.waiters.remove(waiter)

    @staticmethod
    def _wake(waiters: list[Deferred[Entry | None]], entry: Entry | None) -> None:
        # Each waiter has its own Deferred: one shared by many would hand
        # the later ones whatever the earlier ones' callbacks returned.
        for waiter in waiters:
            if not waiter.called:
                waiter.callback(entry)

    def _retry(self, state: _Origin) -> None:
        state.retry_call = None
        if state.waiters:
            self._fetch(state, state.trigger)

    def _give_up(self, state: _Origin) -> None:
        state.timeout_call = None
        if state.unreachable_since is not None:
            # Timers run on the loop's clock, the database on the wall clock.
            left = state.unreachable_since + self.config.unreachable_timeout - self.db.clock()
            if left > 0:
                state.timeout_call = compat.call_later(left, self._give_up, state)
                return
        waiters, state.waiters = state.waiters, []
        if waiters:
            logger.warning(
                "robots.txt unreachable: dropping %(count)d requests for %(origin)s,"
                " held for %(timeout)s s (%(error)s)",
                {
                    "count": len(waiters),
                    "origin": state.name,
                    "timeout": self.config.unreachable_timeout,
                    "error": state.last_error or "no answer",
                },
                extra={"spider": self.crawler.spider},
            )
        self._wake(waiters, self.db.entry(state.robots_url))
        if not state.waiters and state.retry_call is not None:
            state.retry_call.cancel()
            state.retry_call = None
        self._forget_if_idle(state)

    # Fetching.

    def _fetch(self, state: _Origin, request: Request, *, refresh: bool = False) -> None:
        """Start fetching the robots.txt of ``state``, unless a fetch is under way."""
        state.trigger = request
        if state.fetching:
            return
        state.fetching = True
        if state.retry_call is not None:
            state.retry_call.cancel()
            state.retry_call = None
        if refresh:
            self._inc("refreshed")
        # On the next turn of the loop, so that whoever asked is waiting
        # before the fetch can end.
        compat.call_later(0, self._launch, state)

    def _launch(self, state: _Origin) -> None:
        running = deferred_from_coro(self._run_fetch(state))
        self._running.add(running)
        running.addBoth(lambda _: self._running.discard(running))

    async def _run_fetch(self, state: _Origin) -> None:
        entry: Entry | None = None
        try:
            if self.fleet is not None:
                entry = await self._fleet_fetch(state)
            else:
                entry = await self._fetch_and_store(state)
        finally:
            state.fetching = False
            waiters, state.waiters = state.waiters, []
            self._wake(waiters, entry)
            self._forget_if_idle(state)

    async def _fleet_fetch(self, state: _Origin) -> Entry:
        """Fetch under the origin's lease, or take what the lease holder fetched."""
        fleet = self.fleet
        assert fleet is not None
        entry = await self._lease_or_wait(fleet, state)
        if entry is not None:
            self._adopt(state, entry)
            return entry
        renew = _Renewal(fleet, state.name, self.owner, self.config.lease)
        try:
            entry = await self._fetch_and_store(state)
        finally:
            renew.stop()
            fleet.release(state.name, self.owner)
        return entry

    async def _lease_or_wait(self, fleet: CachedStore, state: _Origin) -> Entry | None:
        """``None`` once this process should fetch; the entry if another one fetched it.

        The lease expires ``ROBOTRULES_LEASE`` seconds after its holder
        stopped renewing it (a crashed crawler), and then is taken here.
        """
        pause = FLEET_POLL_FIRST
        while True:
            taken = fleet.lease(state.name, self.owner, self.config.lease)
            # Taken (or no store to ask): what if the holder just finished?
            entry = fleet.refresh(state.name) if taken is not None else None
            if taken is not False:
                if entry is not None:
                    if taken:
                        fleet.release(state.name, self.owner)
                    self._inc("fleet/waited")
                return entry
            if entry is not None:
                self._inc("fleet/waited")
                return entry
            await compat.sleep(pause)
            pause = min(pause * 2, FLEET_POLL_MAX)

    def _adopt(self, state: _Origin, entry: Entry) -> None:
        """What another crawler fetched becomes this origin's state here."""
        if entry.outcome is Outcome.UNREACHABLE:
            state.failures += 1
            if state.unreachable_since is None:
                state.unreachable_since = entry.fetched_at
            status = f"HTTP {entry.status}" if entry.status is not None else "no answer"
            state.last_error = f"{status}, fetched by another crawler"
        else:
            state.failures = 0
            state.unreachable_since = None
            state.last_error = ""
            state.cancel_timers()
        self.stats.set_value(f"{STATS_PREFIX}origins", len(self.db))

    async def _fetch_and_store(self, state: _Origin) -> Entry:
        trigger = state.trigger
        started = time.monotonic()
        try:
            fetched = await self._download(state.robots_url, trigger)
            entry = self._store(state, fetched)
        except Exception as exc:  # a bug, not the network: still never "allow all"
            logger.error(
                "Error fetching %(url)s",
                {"url": state.robots_url},
                exc_info=True,
                extra={"spider": self.crawler.spider},
            )
            detail = f"{type(exc).__name__}: {exc}"
            entry = self._store_unreachable(state, None, state.robots_url, detail)
        seconds = time.monotonic() - started
        self.fetches += 1
        if self.slowest is None or seconds > self.slowest[0]:
            self.slowest = (seconds, state.robots_url)
        self.stats.set_value(f"{STATS_PREFIX}origins", len(self.db))
        self.stats.set_value(f"{STATS_PREFIX}evicted", self.db.evicted)
        if self._update_politeness(state, entry) and self.fleet is not None:
            # The robots.txt request itself was the origin's latest visit.
            self.fleet.reserve(state.name, self.crawl_delay(trigger) or 0.0)
        await self._send_signals(state, entry, trigger)
        return entry

    async def _send_signals(self, state: _Origin, entry: Entry, trigger: Request) -> None:
        fetched_robots = entry.robots if entry.outcome is Outcome.RULES else None
        if fetched_robots is not None and compat.ROBOTS_PARSED is not None:
            parser = RobotParser(
                fetched_robots, precedence=self.db.precedence, agent_match=self.db.agent_match
            )
            await compat.send_signal(
                self.crawler, compat.ROBOTS_PARSED, robotparser=parser, request=trigger
            )
        await compat.send_signal(
            self.crawler,
            signals.robotrules_fetched,
            origin=state.name,
            robots=fetched_robots,
            outcome=entry.outcome,
            status=entry.status,
            request=trigger,
        )

    async def _fetch_place(self) -> _Place:
        """One of the ROBOTRULES_CONCURRENT_FETCHES places, held until done or slow."""
        await maybe_deferred_to_future(self._fetch_places.acquire())
        return _Place(self._fetch_places)

    def _robots_request(self, url: str, trigger: Request) -> Request:
        meta: dict[str, Any] = {
            "dont_obey_robotstxt": True,
            # Redirects are followed here, to count them (SPEC 8: at most 5).
            "dont_redirect": True,
            # Wherever robots.txt redirects to, it is no offsite request.
            "allow_offsite": True,
            # Only the first ROBOTRULES_MAX_SIZE bytes are read; a body (or a
            # decompressed body: a gzip bomb) far beyond that is refused
            # early, before it fills memory, and counts as unreachable.
            "download_maxsize": self._download_maxsize,
        }
        for key in ("proxy", "download_slot"):
            if key in trigger.meta:
                meta[key] = trigger.meta[key]
        return Request(url, priority=ROBOTS_PRIORITY, meta=meta, callback=NO_CALLBACK)

    async def _download(self, robots_url: str, trigger: Request) -> _Fetched:
        """Fetch ``robots_url`` through the engine, following up to 5 redirects."""
        url = robots_url
        for hop in range(MAX_REDIRECTS + 1):
            self._inc("request_count")
            try:
                place = await self._fetch_place()
                try:
                    with _own_allowance(self.crawler):
                        response = await compat.download(
                            self.crawler, self._robots_request(url, trigger)
                        )
                finally:
                    place.give_up()
            except Exception as exc:
                self._inc(f"exception_count/{type(exc).__name__}")
                return _Fetched(None, url, exc)
            self._inc(f"response_status_count/{response.status}")
            location = response.headers.get(b"Location")
            if not (300 <= response.status < 400 and location and hop < MAX_REDIRECTS):
                # More than 5 redirects leaves a 3xx here: no robots.txt (SPEC 8).
                return _Fetched(response, url, None)
            target = urljoin(url, safe_url_string(location))
            if urlsplit(target).scheme not in ("http", "https"):
                # Not followed: the 3xx stays final, which means no robots.txt.
                logger.debug(
                    "robots.txt redirect (%(status)d) to a non-HTTP URL %(target)s from %(url)s:"
                    " not followed",
                    {"status": response.status, "target": target, "url": url},
                    extra={"spider": self.crawler.spider},
                )
                return _Fetched(response, url, None)
            logger.debug(
                "robots.txt redirect (%(status)d) to %(target)s from %(url)s",
                {"status": response.status, "target": target, "url": url},
                extra={"spider": self.crawler.spider},
            )
            url = target
        raise AssertionError("unreachable: the last hop always returns")  # pragma: no cover

    def _store(self, state: _Origin, fetched: _Fetched) -> Entry:
        """Record what the fetch means for the origin (fetch_policy decides)."""
        response = fetched.response
        if response is None:
            error = fetched.error
            detail = f"{type(error).__name__}: {error}" if error is not None else "no answer"
            return self._store_unreachable(state, None, fetched.url, detail)
        status = response.status
        outcome = outcome_for_status(status, unauthorized=self.config.unauthorized)
        if outcome is Outcome.UNREACHABLE:
            return self._store_unreachable(state, status, fetched.url, f"HTTP {status}")
        now = self.db.clock()
        headers = {
            key.decode("latin-1"): value.decode("latin-1")
            for key in response.headers
            if (value := response.headers.get(key)) is not None
        }
        lifetime = freshness_lifetime(
            headers, max_age=self.config.max_age, min_age=self.config.min_age, now=now
        )
        robots = None
        if outcome is Outcome.RULES:
            robots = RobotsTxt.parse(response.body, state.robots_url, max_size=self.db.max_size)
            if robots.truncated:
                self._inc("truncated")
                logger.info(
                    "robots.txt of %(origin)s is larger than ROBOTRULES_MAX_SIZE"
                    " (%(size)d > %(limit)d bytes): only its first part was read",
                    {"origin": state.name, "size": len(response.body), "limit": self.db.max_size},
                    extra={"spider": self.crawler.spider},
                )
        entry = self.db.put(
            state.robots_url,
            outcome,
            robots,
            fresh_until=now + lifetime,
            status=status,
            final_url=fetched.url,
            body=response.body if robots is not None else None,
        )
        if state.unreachable_since is not None:
            logger.info(
                "robots.txt of %(origin)s reachable again after %(seconds).1f s",
                {"origin": state.name, "seconds": now - state.unreachable_since},
                extra={"spider": self.crawler.spider},
            )
        state.failures = 0
        state.unreachable_since = None
        state.last_error = ""
        state.cancel_timers()
        logger.debug(
            "robots.txt of %(origin)s: %(outcome)s (HTTP %(status)d), fresh for %(lifetime).0f s",
            {"origin": state.name, "outcome": outcome, "status": status, "lifetime": lifetime},
            extra={"spider": self.crawler.spider},
        )
        return entry

    def _store_unreachable(
        self, state: _Origin, status: int | None, url: str, detail: str
    ) -> Entry:
        now = self.db.clock()
        previous = self.db.entry(state.robots_url)
        earlier = previous.robots if previous is not None else None
        state.failures += 1
        state.last_error = detail
        wait = retry_delay(state.failures, base=self.config.retry_delay, cap=MAX_RETRY_DELAY)
        entry = self.db.put(
            state.robots_url,
            Outcome.UNREACHABLE,
            earlier,
            fresh_until=now + wait,
            status=status,
            final_url=url,
        )
        held = (
            "its earlier rules decide meanwhile" if earlier is not None else "its requests are held"
        )
        if state.unreachable_since is None:
            state.unreachable_since = now
            self._inc("origins/unreachable")
            logger.warning(
                "robots.txt unreachable: %(url)s (%(detail)s); %(held)s, next try in %(wait).1f s",
                {"url": state.robots_url, "detail": detail, "held": held, "wait": wait},
                extra={"spider": self.crawler.spider},
            )
        else:
            logger.info(
                "robots.txt still unreachable: %(url)s (%(detail)s, %(failures)d tries);"
                " next try in %(wait).1f s",
                {
                    "url": state.robots_url,
                    "detail": detail,
                    "failures": state.failures,
                    "wait": wait,
                },
                extra={"spider": self.crawler.spider},
            )
        return entry

    def _forget_if_idle(self, state: _Origin) -> None:
        """Drop the state of an origin that needs none (unreachable ones keep their back-off)."""
        if state.idle and state.unreachable_since is None:
            self._origins.pop(state.name, None)
        elif len(self._origins) > self.config.cache_size:
            # Bounded like the rules: idle unreachable origins lose their
            # back-off history first (fetched at once when next needed).
            for idle in [s for s in self._origins.values() if s.idle]:
                del self._origins[idle.name]

    # Politeness.

    def _update_politeness(self, state: _Origin, entry: Entry) -> bool:
        """Note what the origin's rules ask of the pace; whether they ask anything."""
        if not self._note_politeness(state.name, entry):
            return False
        self.apply_crawl_delay(state.trigger)
        return True

    def _note_politeness(self, origin: str, entry: Entry) -> bool:
        if not self.config.crawl_delay:
            return False
        robots = entry.robots
        politeness = None
        if robots is not None:
            agent, agent_match = self.db.agent, self.db.agent_match
            crawl_delay = robots.crawl_delay(agent, agent_match)
            rate = robots.request_rate(agent, agent_match)
            if crawl_delay is not None or rate is not None:
                politeness = _Politeness(crawl_delay, rate)
        self._politeness.pop(origin, None)
        if politeness is None:
            return False
        self._politeness[origin] = politeness
        while len(self._politeness) > self.config.cache_size:
            del self._politeness[next(iter(self._politeness))]
        return True

    def crawl_delay(self, request: Request) -> float | None:
        """Seconds to keep between requests to the origin of ``request``, if its rules ask."""
        if not self._politeness:
            return None
        try:
            politeness = self._politeness.get(origin_of(request.url))
        except ValueError:
            return None
        if politeness is None:
            return None
        delay = min(politeness.delay(dt.datetime.now(dt.timezone.utc)), self.config.max_crawl_delay)
        return delay if delay > 0 else None

    def apply_crawl_delay(self, request: Request) -> None:
        """Make the download slot of ``request`` keep its origin's Crawl-delay, as a floor.

        The slot's random jitter is allowed for, so that even the shortest
        gap keeps to the delay. Only ever raises the slot's delay: what
        AutoThrottle or ``DOWNLOAD_DELAY`` ask for above it stays.
        """
        if self.fleet is not None and self.fleet.available:
            return  # the fleet's turns keep the delay (see pace)
        self._raise_slot_delay(request)

    def _raise_slot_delay(self, request: Request) -> None:
        delay = self.crawl_delay(request)
        slot = self._slot(request) if delay is not None else None
        if delay is None or slot is None:
            return
        jitter = compat.slot_jitter(slot)
        floor = delay / (1.0 - jitter) if 0.0 < jitter < 1.0 else delay
        if slot.delay < floor:
            slot.delay = floor
            self._inc("crawl_delay/applied")

    async def pace(self, request: Request) -> None:
        """Wait for the origin's next fleet-wide turn, when its rules ask for a delay.

        With a shared store, every crawler books its requests to a delayed
        origin in the store, one turn per delay, and sends each at its turn:
        together they keep the delay. The turn is at least this crawler's own
        download-slot gap (``DOWNLOAD_DELAY``, AutoThrottle, randomised up to
        1.5 times), so the slot adds no wait after it. Without a shared store
        (or while it does not answer) the slot's delay keeps it, as
        :meth:`apply_crawl_delay` says.
        """
        delay = self.crawl_delay(request)
        if delay is None:
            return
        fleet = self.fleet
        if fleet is None:
            self.apply_crawl_delay(request)
            return
        slot = self._slot(request)
        gap = max(delay, _slot_gap(slot, self.crawler))
        origin = origin_of(request.url)
        for _ in range(MAX_REBOOKINGS + 1):
            wait = fleet.reserve(origin, gap)
            if wait is None:
                self._raise_slot_delay(request)  # the store is down: this crawler alone
                return
            if wait <= 0:
                break
            due = time.monotonic() + wait
            # Seen by the slot meanwhile, as if queued there: DownloaderAwarePriorityQueue
            # then sends this origin no more requests while they wait their turn.
            with compat.watch_in_slot(slot, request):
                await compat.sleep(wait)
            # Woken late (a busy process): the next crawler's turn is already
            # near, so sending now would shorten the gap. Book another turn.
            if time.monotonic() - due <= LATE_SHARE * gap:
                break
            self._inc("fleet/rebooked")
        self._inc("fleet/paced")

    def _slot(self, request: Request) -> Slot | None:
        return compat.download_slot(self.crawler, request)

    def close(self) -> None:
        """Cancel the timers of every origin (the spider is closed); close the store."""
        for state in self._origins.values():
            state.cancel_timers()
        if self.fleet is not None:
            self.fleet.close()

    # Reporting.

    def _inc(self, key: str) -> None:
        self.stats.inc_value(f"{STATS_PREFIX}{key}")

    def _store_event(self, name: str) -> None:
        self._inc(f"store/{name}")

    def record_drop(self, request: Request, exc: RobotsTxtForbidden | RobotsTxtUnreachable) -> None:
        """Count a request robots.txt drops, and log why: the one place for both layers."""
        spider = {"spider": self.crawler.spider}
        if isinstance(exc, RobotsTxtUnreachable):
            self.count("unreachable")
            logger.debug(
                "Dropped %(request)s: %(reason)s", {"request": request, "reason": exc}, extra=spider
            )
        else:
            self.count("forbidden")
            logger.debug(
                "Forbidden by robots.txt: %(request)s %(reason)s",
                {"request": request, "reason": exc.reason},
                extra=spider,
            )

    def count(self, verdict: str, by: int = 1) -> None:
        """Count a checked request: ``offered``, ``allowed``, ``forbidden`` or ``unreachable``."""
        self.stats.inc_value(f"{STATS_PREFIX}{verdict}", by)

    def summary(self) -> str:
        """One line on the crawl's robots.txt: origins, fetches, drops, slowest file."""
        stats = self.stats

        def value(key: str) -> int:
            return int(stats.get_value(f"{STATS_PREFIX}{key}", 0))

        text = (
            f"robots.txt: {len(self.db)} origins held, {self.fetches} fetches,"
            f" {value('forbidden')} requests forbidden,"
            f" {value('unreachable')} dropped as unreachable"
        )
        if self.slowest is not None:
            seconds, url = self.slowest
            text += f"; slowest robots.txt: {url} ({seconds:.2f} s)"
        return text
