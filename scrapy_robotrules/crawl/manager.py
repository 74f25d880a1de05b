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
import zlib
from collections.abc import Callable, Mapping
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

from ..engine.agents import product_token
from ..engine.database import RobotRules
from ..engine.directives import RequestRate
from ..engine.fetch_policy import (
    MAX_REDIRECTS,
    Outcome,
    freshness_lifetime,
    outcome_for_status,
    retry_delay,
)
from ..engine.robotstxt import Decision, RobotsTxt, is_robots_path
from ..engine.stores import CachedStore
from ..engine.urls import origin_of, request_path
from ..engine.usage.preferences import TDM, USAGE_REFUSAL, refuse_purposes
from . import compat, signals
from .content_coding import ACCEPT_ENCODING, ROBOTS_META, decode_body, hidden_encoding
from .itemverdict import shown_url
from .overflow import DiskOverflow, OverflowDirectory
from .robotparser import RobotParser
from .settings import MAX_RETRY_DELAY, RobotRulesConfig, crawl_config, named_for_robots
from .tdmrepfetch import TDMREP_REFUSAL, TdmRepFiles

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from ..engine.stores import Entry

__all__ = ["ROBOTS_PRIORITY", "RobotsManager", "RobotsTxtUnreachable"]

logger = logging.getLogger(__name__)

ROBOTS_PRIORITY = 1000
"""Priority of robots.txt requests, as Scrapy's own middleware gives them."""

DECIDED = "robotrules_decided"
"""Request meta key: what the request was decided for.

The URL it was allowed for (a retry of that URL carries the decision; a
redirect to another URL is decided again, for its own origin and path), or
the exception to raise (``RobotsTxtForbidden`` or ``RobotsTxtUnreachable``)
when dropped but let through to the downloader so that its errback hears of
it (the middleware raises it at once; it was counted when decided).
"""
OFFERED = "_robotrules_offered"
"""Request meta key: the URL for which the request was counted as offered."""
PARKED = "_robotrules_parked"
"""Request meta key: the URL for which the request was counted as parked."""

STATS_PREFIX = "robotrules/"
DOWNLOAD_SIZE_FACTOR = 10
"""A robots.txt body, as sent, may be this many times ROBOTRULES_MAX_SIZE before the
download is refused (``download_maxsize``): beyond, it counts as unreachable."""
_UNCHECKED_SCHEMES = ("data", "file")
_EMPTY = RobotsTxt.parse(b"")


ROBOTS_REQUEST = "robotrules_robots_txt"
"""Request meta key: set on this package's robots.txt requests."""


class _QuietRobotsRetries(logging.Filter):
    """Scrapy's "Gave up retrying" ERROR for a robots.txt request, as DEBUG.

    An unreachable robots.txt is this package's to report (one WARNING per
    origin, stats), and it is fetched again with back-off: each round of
    Scrapy's retries giving up is no error of the crawl.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.levelno > logging.DEBUG and isinstance(args, Mapping):
            request = args.get("request")
            if isinstance(request, Request) and request.meta.get(ROBOTS_REQUEST):
                record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


def _shown(request: Request) -> str:
    """A request as Scrapy shows it (``<GET url>``), without a user name or password."""
    return f"<{request.method} {shown_url(request.url)}>"


def _quiet_robots_retries() -> None:
    retry_logger = logging.getLogger("scrapy.downloadermiddlewares.retry")
    if not any(isinstance(f, _QuietRobotsRetries) for f in retry_logger.filters):
        retry_logger.addFilter(_QuietRobotsRetries())


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


class RobotsTxtNotFetched(IgnoreRequest):
    """A request dropped because the crawl closed before its origin's robots.txt was fetched."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        super().__init__(f"the crawl closed before {origin}/robots.txt was fetched")

    def __reduce__(self) -> tuple[type[RobotsTxtNotFetched], tuple[str]]:
        return type(self), (self.origin,)


DropReason = RobotsTxtForbidden | RobotsTxtUnreachable | RobotsTxtNotFetched
"""Why robots.txt handling dropped a request."""


class _Closing(Exception):
    """A robots.txt fetch not started because the crawl is closing."""


MAX_REBOOKINGS = 3
LATE_SHARE = 0.05
"""A request woken later than this share of its origin's delay after its fleet
turn books another turn (at most ``MAX_REBOOKINGS`` times) instead of going."""
FLEET_MARGIN = 0.1
"""Fleet turns are this share wider than the Crawl-delay (see ``pace``): what one
crawler's request spends between its turn and the site (the middleware chain,
the downloader, a busy process) must not shorten the gap another one keeps."""
FLEET_POLL_FIRST = 0.05
FLEET_POLL_MAX = 1.0
"""Seconds between looks at the shared store while another crawler fetches: doubling."""


MAX_DELAY_JITTER = 0.1
"""The random variation kept on a slot whose delay robots.txt sets (Scrapy's default: 0.5).

Gaps must be at least the Crawl-delay, so the slot's delay is raised to
``delay / (1 - jitter)``; with Scrapy's +-50% the gaps would then average
twice the delay. With +-10% they run from the delay to 1.22 times it,
1.11 times on average."""


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
        "robots_due",
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
        self.robots_due = False
        """The next fetch is of robots.txt too (else of tdmrep.json only)."""
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
            cache_bytes=config.cache_bytes,
            store=config.store,
        )
        self.fleet: CachedStore | None = None
        """The shared store, when there is one: fetch leases and fleet-wide pacing."""
        if isinstance(self.db.store, CachedStore):
            self.fleet = self.db.store
            self.fleet.on_event = self._store_event
            # Rules another crawler fetched ask this one for the same pace.
            self.fleet.on_adopt = lambda entry: self._note_politeness(entry.origin, entry)
        self._own_floor = self.fleet is not None and self._may_lose_turns(self.fleet)
        """The store may drop its pace keys: the slot floor keeps Crawl-delay here as well."""
        self._request_agents = not named_for_robots(crawler.settings, crawler.spider)
        """No agent named for robots.txt: a request's own User-Agent header is matched."""
        self._token = config.product_token
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """Who holds this process's fetch leases in the shared store."""
        self.fetches = 0
        """robots.txt fetches completed, whatever their outcome."""
        self.slowest: tuple[float, str] | None = None
        """The longest fetch so far: seconds, robots.txt URL."""
        self.summary_lines: list[Callable[[], str | None]] = []
        """More lines for the closing summary (the page directives add theirs)."""
        self._origins: dict[str, _Origin] = {}
        self.tdmrep = TdmRepFiles(self) if TDM in config.purposes else None
        """The origins' tdmrep.json, fetched after robots.txt when the crawl declares ``tdm``."""
        self._politeness: dict[str, _Politeness] = {}
        self._running: set[Deferred[None]] = set()
        self._waiting = 0
        self._parked: dict[int, Request] = {}
        """Parked requests by the id of their waiter."""
        self._scheduler_closed = False
        self._overflow: dict[str, DiskOverflow] = {}
        """Per origin, parked requests beyond ROBOTRULES_MAX_WAITING_PER_ORIGIN, on disk."""
        self._overflow_dir = OverflowDirectory()
        settings = crawler.settings
        self._saves_at_close = bool(settings.get("JOBDIR")) or settings.getbool("SCHEDULER_PERSIST")
        """Whether requests still waiting when the crawl closes are saved (else lost, counted):
        in JOBDIR, or in a shared queue that outlives this crawler (scrapy-redis's
        ``SCHEDULER_PERSIST``), where another crawler of the fleet takes them."""
        self._fetch_places = DeferredSemaphore(config.concurrent_fetches)
        """robots.txt downloads under way at once; more wait here, outside the downloader."""
        limit = DOWNLOAD_SIZE_FACTOR * config.max_size
        scrapy_limit = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self._download_maxsize = min(limit, scrapy_limit) if scrapy_limit > 0 else limit
        """Bytes a robots.txt download (or decompression) may reach before it is refused."""
        crawler.signals.connect(self.close, signal=scrapy_signals.spider_closed)
        _quiet_robots_retries()

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
            if self.closing():
                raise RobotsTxtNotFetched(origin)
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
        Past ``ROBOTRULES_MAX_WAITING_PER_ORIGIN`` parked requests for the
        origin, it waits on disk (see :mod:`.overflow`), so that neither
        memory nor download places go to requests that can only wait.
        ``False`` (not parked) once the crawl is closing: see :meth:`hand_over`.
        """
        state = self._origins.get(origin_of(request.url))
        if state is None or self._scheduler_closed or self.closing():
            return False
        if state.parked >= self.config.max_waiting_per_origin:
            self._overflow_request(state, request)
            return True
        waiter: Deferred[Entry | None] = Deferred()
        state.waiters.append(waiter)
        state.parked += 1
        self._parked[id(waiter)] = request
        self._waiting += 1
        self.stats.max_value(f"{STATS_PREFIX}waiting/max", self._waiting)

        def offer_again(_: Entry | None) -> None:
            state.parked -= 1
            self._waiting -= 1
            if self._parked.pop(id(waiter), None) is not None:
                self._offer(request)
            # else: taken by a closing scheduler

        waiter.addCallback(offer_again)
        return True

    def _overflow_request(self, state: _Origin, request: Request) -> None:
        overflow = self._overflow.get(state.name)
        if overflow is None:
            overflow = self._overflow[state.name] = self._overflow_dir.queue(
                self.crawler, state.name
            )
            waiter: Deferred[Entry | None] = Deferred()
            state.waiters.append(waiter)
            waiter.addCallback(lambda _: self._drain_overflow(state.name))
        if not overflow.push(request):
            self._inc("parked/memory")
        self._waiting += 1
        self.stats.max_value(f"{STATS_PREFIX}waiting/max", self._waiting)
        self.stats.max_value(f"{STATS_PREFIX}parked/disk/max", overflow.on_disk)

    def _drain_overflow(self, origin: str) -> None:
        overflow = self._overflow.pop(origin, None)
        if overflow is None:
            return  # taken by a closing scheduler
        requests = overflow.drain()
        self._waiting -= len(requests)
        for request in requests:
            self._offer(request)

    def _offer(self, request: Request) -> None:
        """Offer a parked request to the scheduler again (through the door: decided there)."""
        engine = compat.engine(self.crawler)
        if engine is None or engine.spider is None or self._scheduler_closed:
            # The scheduler is gone: nothing can take it any more.
            self._lost([request])
            return
        engine.crawl(request)

    def hand_over(self, request: Request) -> None:
        """What becomes of a request offered while the crawl closes, its origin's rules unknown.

        With ``JOBDIR`` it goes into the scheduler undecided, to be saved with
        the rest and decided when the crawl resumes (counted ``saved_at_close``);
        without, it is counted ``lost_at_close`` and raised out as
        :class:`RobotsTxtNotFetched`.
        """
        if self._saves_at_close:
            self._saved([request])
            return
        self._lost([request])
        raise RobotsTxtNotFetched(origin_of(request.url))

    def _saved(self, requests: list[Request]) -> None:
        for request in requests:
            # Offered afresh when the crawl resumes: counted there again.
            request.meta.pop(OFFERED, None)
            request.meta.pop(PARKED, None)
        self.count("saved_at_close", len(requests))

    def _lost(self, requests: list[Request]) -> None:
        if not requests:
            return
        self.count("lost_at_close", len(requests))
        for request in requests:
            logger.debug(
                "Dropped %(request)s: the crawl closed while it waited for robots.txt",
                {"request": _shown(request)},
                extra={"spider": self.crawler.spider},
            )

    def pending(self) -> bool:
        """Whether requests are parked or robots.txt fetches are under way."""
        return (
            bool(self._parked)
            or bool(self._overflow)
            or any(s.fetching for s in self._origins.values())
        )

    def closing(self) -> bool:
        """Whether the crawl is stopping or its spider closing: no new fetch or retry starts."""
        return compat.crawl_closing(self.crawler)

    def take_parked(self) -> list[Request]:
        """Every parked request, no longer parked: for a scheduler about to close.

        With ``JOBDIR`` they are returned, to be saved with the scheduler's
        queue (``saved_at_close``); without, there is nowhere to keep them:
        they are counted (``lost_at_close``), logged, and none is returned.
        """
        requests = list(self._parked.values())
        self._parked.clear()
        for origin in list(self._overflow):
            requests += self._overflow.pop(origin).drain()
        # No more parking: a request parked now would outlive the scheduler.
        self._scheduler_closed = True
        if self._saves_at_close:
            self._saved(requests)
            return requests
        self._lost(requests)
        return []

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
            decision = entry.explain(
                url, self._agent(request), self.db.precedence, self.db.agent_match
            )
            # --- usage preferences (usage.py): a purpose robots.txt refuses drops the request.
            if self.config.purposes and decision.allowed and entry.robots is not None:
                decision = refuse_purposes(entry.robots, decision, self.config.purposes)
            if self.tdmrep is not None and decision.allowed:  # tdmrepfetch.py
                tdm = self.tdmrep.entry(origin)
                if tdm is None or not tdm.is_fresh(now):
                    self._fetch(self._state(origin, request), request, robots=False)
                if tdm is None:
                    return None  # waits for the origin's tdmrep.json, as for its robots.txt
                decision = self.tdmrep.refuse(tdm, decision)
            # --- end usage preferences
            return decision
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
        if self.closing():
            # No new try once the crawl is stopping: wake who waits (parked
            # requests are saved or counted lost, the others dropped).
            waiters, state.waiters = state.waiters, []
            self._wake(waiters, None)
            return
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

    def _fetch(
        self, state: _Origin, request: Request, *, refresh: bool = False, robots: bool = True
    ) -> None:
        """Start fetching the robots.txt of ``state``, unless a fetch is under way.

        ``robots=False``: only its tdmrep.json is due (see :mod:`.tdmrepfetch`).
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
            if not state.robots_due:
                entry = self.db.entry(state.robots_url)
            elif self.fleet is not None:
                entry = await self._fleet_fetch(state)
            else:
                entry = await self._fetch_and_store(state)
            # tdmrep.json next, when due and robots.txt lets some request through.
            deciding = entry is not None and (
                entry.robots is not None or entry.outcome is Outcome.ALLOW_ALL
            )
            if deciding and self.tdmrep is not None and self.tdmrep.due(state.name):
                await self.tdmrep.fetch(state.name, state.trigger)
        except _Closing:
            pass  # the waiters wake without rules: saved, lost or dropped as the crawl closes
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
            if self.closing():
                raise _Closing
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
        except _Closing:
            raise
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

    def _robots_request(self, url: str, trigger: Request, maxsize: int | None = None) -> Request:
        meta: dict[str, Any] = {
            "dont_obey_robotstxt": True,
            ROBOTS_REQUEST: True,
            # Redirects are followed here, to count them (SPEC 8: at most 5).
            "dont_redirect": True,
            # Wherever robots.txt redirects to, it is no offsite request.
            "allow_offsite": True,
            # Only the first ROBOTRULES_MAX_SIZE bytes are read: a body sent
            # far larger than that is refused early, before it fills memory,
            # and counts as unreachable. A compressed one is unpacked here,
            # only as far as it is read (content_coding).
            "download_maxsize": self._download_maxsize if maxsize is None else maxsize,
            ROBOTS_META: True,
        }
        for key in ("proxy", "download_slot"):
            if key in trigger.meta:
                meta[key] = trigger.meta[key]
        return Request(
            url,
            priority=ROBOTS_PRIORITY,
            meta=meta,
            headers={"Accept-Encoding": ACCEPT_ENCODING},
            callback=NO_CALLBACK,
        )

    async def _download(
        self, robots_url: str, trigger: Request, *, prefix: str = "", maxsize: int | None = None
    ) -> _Fetched:
        """Fetch ``robots_url`` through the engine, following up to 5 redirects.

        Also tdmrep.json's fetch: its stats under ``prefix``, its own ``maxsize``.
        """
        url = robots_url
        file = robots_url.rpartition("/")[2]  # robots.txt or tdmrep.json
        for hop in range(MAX_REDIRECTS + 1):
            place = await self._fetch_place()
            if self.closing():
                place.give_up()
                raise _Closing
            self._inc(f"{prefix}request_count")
            try:
                try:
                    with _own_allowance(self.crawler):
                        response = await compat.download(
                            self.crawler, self._robots_request(url, trigger, maxsize)
                        )
                finally:
                    place.give_up()
            except Exception as exc:
                self._inc(f"{prefix}exception_count/{type(exc).__name__}")
                return _Fetched(None, url, exc)
            self._inc(f"{prefix}response_status_count/{response.status}")
            location = response.headers.get(b"Location")
            if not (300 <= response.status < 400 and location and hop < MAX_REDIRECTS):
                # More than 5 redirects leaves a 3xx here: no robots.txt (SPEC 8).
                return _Fetched(response, url, None)
            target = urljoin(url, safe_url_string(location))
            if urlsplit(target).scheme not in ("http", "https"):
                # Not followed: the 3xx stays final, which means no robots.txt.
                logger.debug(
                    "%(file)s redirect (%(status)d) to a non-HTTP URL %(target)s from %(url)s:"
                    " not followed",
                    {"file": file, "status": response.status, "target": target, "url": url},
                    extra={"spider": self.crawler.spider},
                )
                return _Fetched(response, url, None)
            logger.debug(
                "%(file)s redirect (%(status)d) to %(target)s from %(url)s",
                {"file": file, "status": response.status, "target": target, "url": url},
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
        body = response.body
        codings = hidden_encoding(response)
        if codings and outcome is Outcome.RULES:
            try:
                body = decode_body(body, codings, self.db.max_size + 1)
            except (zlib.error, ValueError) as exc:
                detail = f"HTTP {status}, a body that cannot be unpacked ({exc})"
                return self._store_unreachable(state, status, fetched.url, detail)
        robots = None
        if outcome is Outcome.RULES:
            robots = RobotsTxt.parse(body, state.robots_url, max_size=self.db.max_size)
            if robots.truncated:
                self._inc("truncated")
                logger.info(
                    "robots.txt of %(origin)s is larger than ROBOTRULES_MAX_SIZE"
                    " (%(size)d > %(limit)d bytes): only its first part was read",
                    {"origin": state.name, "size": len(body), "limit": self.db.max_size},
                    extra={"spider": self.crawler.spider},
                )
        entry = self.db.put(
            state.robots_url,
            outcome,
            robots,
            fresh_until=now + lifetime,
            status=status,
            final_url=fetched.url,
            body=body if robots is not None else None,
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

    def _agent(self, request: Request) -> str:
        """The agent robots.txt is asked about for ``request`` (Scrapy's middleware's choice).

        Its own ``User-Agent`` header, when no agent is named for robots.txt
        (``ROBOTRULES_USER_AGENT``...); else, and without one, the crawler's.
        """
        if self._request_agents:
            header = request.headers.get(b"User-Agent")
            if header:
                return header.decode("latin-1")
        return self.db.agent

    def _own_agent_delay(self, request: Request, agent: str) -> float | None:
        """The delay the rules ask of an agent other than the crawler's (no memo: rare)."""
        try:
            entry = self.db.entry(request.url) if self.config.crawl_delay else None
        except ValueError:
            return None
        robots = entry.robots if entry is not None else None
        if robots is None:
            return None
        agent_match = self.db.agent_match
        politeness = _Politeness(
            robots.crawl_delay(agent, agent_match), robots.request_rate(agent, agent_match)
        )
        delay = min(politeness.delay(dt.datetime.now(dt.timezone.utc)), self.config.max_crawl_delay)
        return delay if delay > 0 else None

    def crawl_delay(self, request: Request) -> float | None:
        """Seconds to keep between requests to the origin of ``request``, if its rules ask."""
        agent = self._agent(request)
        if agent is not self.db.agent and product_token(agent) != self._token:
            return self._own_agent_delay(request, agent)
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
        if self.fleet is not None and self.fleet.available and not self._own_floor:
            return  # the fleet's turns keep the delay (see pace)
        self._raise_slot_delay(request)

    def _may_lose_turns(self, fleet: CachedStore) -> bool:
        """Whether the store may evict its pace keys (then: WARNING, stat, slot floor too)."""
        why = fleet.eviction()
        if why is None:
            return False
        self.stats.set_value(f"{STATS_PREFIX}store/may_evict", 1)
        logger.warning(
            "robots.txt store %(store)s: %(why)s; fleet-wide Crawl-delay turns may be lost,"
            " so this crawler also keeps each delay on its own download slots",
            {"store": fleet.backend.name, "why": why},
        )
        return True

    def _raise_slot_delay(self, request: Request) -> None:
        delay = self.crawl_delay(request)
        slot = self._slot(request) if delay is not None else None
        if delay is None or slot is None:
            return
        jitter = compat.limit_jitter(slot, MAX_DELAY_JITTER)
        floor = delay / (1.0 - jitter)
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
        # Turns a little wider than the delay: a request reaches the site some
        # time after its turn, and that time varies between crawlers.
        gap = max(delay * (1.0 + FLEET_MARGIN), _slot_gap(slot, self.crawler))
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
        """Cancel the timers of every origin (the spider is closed); close the store.

        The overflow directory goes too: by now the closing scheduler took
        what waited there (saved with JOBDIR, else counted lost).
        """
        for state in self._origins.values():
            state.cancel_timers()
        self._overflow_dir.remove()
        if self.fleet is not None:
            self.fleet.close()

    # Reporting.

    def _inc(self, key: str) -> None:
        self.stats.inc_value(f"{STATS_PREFIX}{key}")

    def _store_event(self, name: str) -> None:
        self._inc(f"store/{name}")

    def record_drop(self, request: Request, exc: DropReason) -> None:
        """Count a request robots.txt drops, and log why: the one place for both layers."""
        spider = {"spider": self.crawler.spider}
        if isinstance(exc, RobotsTxtNotFetched):
            self._lost([request])
        elif isinstance(exc, RobotsTxtUnreachable):
            self.count("unreachable")
            logger.debug(
                "Dropped %(request)s: %(reason)s",
                {"request": _shown(request), "reason": exc},
                extra=spider,
            )
        else:
            self.count("forbidden")
            if USAGE_REFUSAL in exc.reason:  # usage preferences (usage.py)
                self.stats.inc_value(f"{STATS_PREFIX}usage/forbidden")
                if TDMREP_REFUSAL in exc.reason:
                    self.stats.inc_value(f"{STATS_PREFIX}usage/tdmrep/forbidden")
            logger.debug(
                "Forbidden by robots.txt: %(request)s %(reason)s",
                {"request": _shown(request), "reason": exc.reason},
                extra=spider,
            )

    def count(self, verdict: str, by: int = 1) -> None:
        """Count a checked request: ``offered``, ``allowed``, ``forbidden`` or ``unreachable``."""
        self.stats.inc_value(f"{STATS_PREFIX}{verdict}", by)

    def warn_lost(self) -> None:
        """One WARNING at close for the requests the crawl closed on (DEBUG lines name them)."""
        lost = int(self.stats.get_value(f"{STATS_PREFIX}lost_at_close", 0))
        if lost:
            logger.warning(
                "%(count)d requests were still waiting for robots.txt when the crawl closed"
                " (no JOBDIR to save them in): counted as robotrules/lost_at_close",
                {"count": lost},
                extra={"spider": self.crawler.spider},
            )

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
        return "\n".join([text, *filter(None, (line() for line in self.summary_lines))])
