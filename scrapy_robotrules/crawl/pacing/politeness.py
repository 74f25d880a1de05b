"""The pace robots.txt asks for: Crawl-delay and Request-rate (SPEC 6), kept by slots or turns.

Alone, a crawler keeps an origin's delay as a floor under its download
slot's delay (random jitter allowed for). With a shared store, the crawlers
of a fleet book turns per origin in the store, one per delay (:meth:`Politeness.pace`);
a store that may evict its pace keys makes each crawler keep the slot floor
as well.

The delays asked of the crawler's own agent are noted per origin when its
rules arrive (fetched here, or taken from the shared store), rather than read
from the rules at each of the three calls a page makes: reading them there
would reorder the rules cache and ask the shared store about stale entries,
and a crawl of sites without delays would pay for a lookup at each call.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.config.policy_lookup import SitePolicies
from scrapy_robotrules.crawl.config.settings import named_for_robots
from scrapy_robotrules.crawl.requestmeta import origin_for
from scrapy_robotrules.engine.operator_tools.site_delays import site_delay
from scrapy_robotrules.engine.operator_tools.site_policies import Policies, plain
from scrapy_robotrules.engine.robots.agents import product_token

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from typing import Any

    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler

    from scrapy_robotrules.crawl.config.settings import RobotRulesConfig
    from scrapy_robotrules.crawl.pacing.slotwait import SlotWait
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.database import RobotRules
    from scrapy_robotrules.engine.operator_tools.site_policies import Policy
    from scrapy_robotrules.engine.robots.agents import AgentMatch
    from scrapy_robotrules.engine.robots.pacing_lines import RequestRate
    from scrapy_robotrules.engine.robots.robotstxt import RobotsTxt
    from scrapy_robotrules.engine.stores import CachedStore, Entry

__all__ = ["FLEET_MARGIN", "LATE_SHARE", "MAX_DELAY_JITTER", "MAX_REBOOKINGS", "Politeness"]

logger = logging.getLogger(__name__)

MAX_REBOOKINGS = 3
AGENTS = 64
"""User-Agent header values whose decoded agent is kept."""
LATE_SHARE = 0.05
"""A request woken later than this share of its origin's delay after its fleet
turn books another turn (at most ``MAX_REBOOKINGS`` times) instead of going."""
FLEET_MARGIN = 0.1
"""Fleet turns are this share wider than the Crawl-delay (see ``pace``): what one
crawler's request spends between its turn and the site (the middleware chain,
the downloader, a busy process) must not shorten the gap another one keeps."""
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


class _Asked(NamedTuple):
    """What an origin's rules ask of the crawler's pace."""

    crawl_delay: float | None
    rate: RequestRate | None

    def delay(self, now: dt.datetime) -> float:
        delays = [self.crawl_delay or 0.0]
        if self.rate is not None and (self.rate.window is None or now in self.rate.window):
            delays.append(self.rate.delay)
        return max(delays)


def _source(asked: _Asked, now: dt.datetime, file: str = "robots.txt") -> str:
    """Which line of ``file`` asks the delay: ``robots.txt Crawl-delay: 2``."""
    rate = asked.rate
    applies = rate is not None and (rate.window is None or now in rate.window)
    if rate is not None and applies and rate.delay > (asked.crawl_delay or 0.0):
        return f"{file} Request-rate: {rate.requests}/{plain(rate.seconds)}s"
    return f"{file} Crawl-delay: {plain(asked.crawl_delay or 0.0)}"


def asked_of(robots: RobotsTxt, agent: str, agent_match: AgentMatch) -> _Asked | None:
    """What ``robots`` asks of ``agent``'s pace, if anything."""
    crawl_delay, rate = robots.pace(agent, agent_match)
    if crawl_delay is None and rate is None:
        return None
    return _Asked(crawl_delay, rate)


class Politeness:
    """The delays robots.txt asks of one crawler, per origin, and how they are kept."""

    def __init__(
        self,
        crawler: Crawler,
        config: RobotRulesConfig,
        reporter: Reporter,
        db: RobotRules,
        fleet: CachedStore | None,
        *,
        policies: SitePolicies | None = None,
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.reporter = reporter
        self.db = db
        self.fleet = fleet
        self._asked: dict[str, _Asked] = {}
        self._told: dict[str, tuple[float | None, str]] = {}
        """The delay last logged per origin, and its note (see :meth:`_tell`)."""
        self.policies = policies if policies is not None else SitePolicies(Policies())
        """Per-site policies: their delays replace the project's for their hosts."""
        self.skipped: dict[str, str] = {}
        """Origins not crawled (``max_crawl_delay_action`` ``skip``): why, per origin."""
        self._own_floor = fleet is not None and self._may_lose_turns(fleet)
        """The store may drop its pace keys: the slot floor keeps Crawl-delay here as well."""
        self.request_agents = not named_for_robots(crawler.settings, crawler.spider)
        """No agent named for robots.txt: a request's own User-Agent header is matched."""
        self._token = config.product_token
        self._agents: dict[bytes, str] = {}
        """User-Agent header values decoded, so that the same value gives the same string."""
        self._last_agent, self._last_other = self.db.agent, False
        """The last agent other than the crawler's seen, and whether it is another product."""
        self._delays_seen = self.policies.any
        """Whether any delay may be asked yet: until then, slot floors have nothing to keep."""
        self._on_delays: Callable[[], object] | None = None
        self.slot_wait: SlotWait | None = None
        """Told of each gap a Crawl-delay floor makes a slot keep (pacing/slotwait.py)."""

    def when_delays(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once, as soon as some origin or agent may be asked a delay.

        Until then :meth:`crawl_delay` is None for every request, so the
        extension's slot-floor signal handlers would do nothing but cost.
        """
        if self._delays_seen or self.policies.any:
            self._delays_seen = True
            callback()
        else:
            self._on_delays = callback

    def _delays_possible(self) -> None:
        self._delays_seen = True
        callback, self._on_delays = self._on_delays, None
        if callback is not None:
            callback()

    def watch_unchecked(self, request: Request) -> None:
        """See an unchecked request's agent: another product's rules may ask it a delay."""
        if not self._delays_seen and self.request_agents:
            agent = self.agent(request)
            if agent is not self.db.agent:
                self._others(agent)

    def agent(self, request: Request) -> str:
        """The agent robots.txt is asked about for ``request`` (Scrapy's middleware's choice).

        Its own ``User-Agent`` header, when no agent is named for robots.txt
        (``ROBOTRULES_USER_AGENT``...); else, and without one, the crawler's.
        Its decision asks for the same agent.
        """
        if self.request_agents:
            header = compat.request_header(request, b"User-Agent")
            if header:
                agent = self._agents.get(header)
                if agent is None:
                    if len(self._agents) >= AGENTS:
                        self._agents.clear()
                    agent = self._agents[header] = header.decode("latin-1")
                return agent
        return self.db.agent

    def _others(self, agent: str) -> bool:
        """Whether ``agent`` (not the crawler's own) is another product than the crawler's."""
        if agent != self._last_agent:
            self._last_agent = agent
            self._last_other = product_token(agent) != self._token
            if self._last_other and not self._delays_seen:
                self._delays_possible()  # its rules are read from the store (crawl_delay)
        return self._last_other

    def _may_lose_turns(self, fleet: CachedStore) -> bool:
        """Whether the store may evict its pace keys (then: WARNING, stat, slot floor too)."""
        why = fleet.eviction()
        if why is None:
            return False
        self.reporter.set("store/may_evict", 1)
        logger.warning(
            "robots.txt store %(store)s: %(why)s; fleet-wide Crawl-delay turns may be lost,"
            " so this crawler also keeps each delay on its own download slots",
            {"store": fleet.backend.name, "why": why},
        )
        return True

    def note(self, origin: str, entry: Entry) -> bool:
        """Note what the origin's new rules ask of the pace; whether they ask anything."""
        policy = self.policies.for_origin(origin)
        skip = self.policies.action == "skip" or policy is not None
        if not self.config.crawl_delay and not skip:
            return False
        robots = entry.robots
        agent, match = self.db.agent, self.db.agent_match
        if policy is not None:
            agent, _, match = policy.choose(agent, self.db.precedence, match)
        asked = asked_of(robots, agent, match) if robots is not None else None
        self._asked.pop(origin, None)
        if skip and self._skips(origin, asked, policy):
            return False
        self._tell(origin, asked, policy)
        if asked is None or (not self.config.crawl_delay and policy is None):
            return False
        self._asked[origin] = asked
        if not self._delays_seen:
            self._delays_possible()
        while len(self._asked) > self.config.cache_size:
            del self._asked[next(iter(self._asked))]
        return True

    def _tell(self, origin: str, asked: _Asked | None, policy: Policy | None) -> None:
        """Log at INFO the Crawl-delay ``origin`` gets, and where from: once, again if it changes.

        An origin without a delay gets no line: most of them.
        """
        file = "robots.txt"
        if policy is not None and policy.robots_txt is not None:  # the operator's own file
            agent, _, match = policy.choose(self.db.agent, self.db.precedence, self.db.agent_match)
            asked = asked_of(policy.robots_for(origin), agent, match)
            file = f"the robots_txt of the policy for {policy.pattern}:"
        now = dt.datetime.now(dt.timezone.utc)
        verdict = site_delay(
            asked.delay(now) if asked is not None else None,
            policy,
            obey=self.config.crawl_delay,
            maximum=self.config.max_crawl_delay,
            action="clamp",  # "skip" was logged by _skips
        )
        told = (verdict.delay, verdict.note)
        if self._told.get(origin) == told:
            return
        self._told[origin] = told
        while len(self._told) > self.config.cache_size:
            del self._told[next(iter(self._told))]
        if verdict.delay is None:
            return
        source = verdict.note or (_source(asked, now, file) if asked is not None else "")
        logger.info(
            "Crawl-delay for %(origin)s: %(delay)s s (%(source)s)",
            {"origin": origin, "delay": plain(verdict.delay), "source": source},
            extra=self.reporter.spider,
        )

    def _skips(self, origin: str, asked: _Asked | None, policy: Policy | None) -> bool:
        """Whether the origin asks a delay above the maximum, with action ``skip`` (logged once)."""
        verdict = site_delay(
            asked.delay(dt.datetime.now(dt.timezone.utc)) if asked is not None else None,
            policy,
            obey=self.config.crawl_delay,
            maximum=self.config.max_crawl_delay,
            action=self.policies.action,
        )
        if verdict.skip is None:
            self.skipped.pop(origin, None)
            return False
        reason = f"{verdict.skip}: the site is not crawled"
        if policy is not None and policy.max_crawl_delay_action is not None:
            reason += f" ({policy.describe()})"
        if origin not in self.skipped:
            self.reporter.inc("origins/skipped")
            logger.warning("Skipping %(origin)s: %(reason)s", {"origin": origin, "reason": reason})
        self.skipped[origin] = reason
        while len(self.skipped) > self.config.cache_size:
            del self.skipped[next(iter(self.skipped))]
        return True

    def _seconds(self, asked: _Asked | None, policy: Policy | None = None) -> float | None:
        raw = asked.delay(dt.datetime.now(dt.timezone.utc)) if asked is not None else None
        if policy is None:
            if raw is None:
                return None
            delay = min(raw, self.config.max_crawl_delay)
            return delay if delay > 0 else None
        return site_delay(
            raw,
            policy,
            obey=self.config.crawl_delay,
            maximum=self.config.max_crawl_delay,
            action="clamp",  # "skip" drops the site's requests before they are paced
        ).delay

    def crawl_delay(self, request: Request, agent: str | None = None) -> float | None:
        """Seconds to keep between requests to the origin of ``request``, if its rules ask.

        ``agent``: the one its decision asked about, when the caller has it (not chosen again).
        """
        if agent is None:
            agent = self.agent(request)
        if agent is not self.db.agent and self._others(agent):
            # Another agent's delay, read from its rules (no memo: rare).
            if not self.config.crawl_delay:
                return None
            try:
                entry = self.db.store.get(origin_for(request))
            except ValueError:
                return None
            if entry is None or entry.robots is None:
                return None
            return self._seconds(asked_of(entry.robots, agent, self.db.agent_match))
        if not self._asked and not self.policies.any:
            return None
        try:
            origin = origin_for(request)
        except ValueError:
            return None
        policy = self.policies.for_origin(origin)
        if policy is not None and policy.robots_txt is not None:  # the operator's own file
            if origin not in self._told:  # never fetched, so never noted: told here
                self._tell(origin, None, policy)
            agent, _, match = policy.choose(self.db.agent, self.db.precedence, self.db.agent_match)
            return self._seconds(asked_of(policy.robots_for(origin), agent, match), policy)
        return self._seconds(self._asked.get(origin), policy)

    def apply_crawl_delay(self, request: Request) -> None:
        """Make the download slot of ``request`` keep its origin's Crawl-delay, as a floor.

        The slot's random jitter is allowed for, so that even the shortest
        gap keeps to the delay. Only ever raises the slot's delay: what
        AutoThrottle or ``DOWNLOAD_DELAY`` ask for above it stays.
        """
        if self.fleet is not None and self.fleet.available and not self._own_floor:
            return  # the fleet's turns keep the delay (see pace)
        self._raise_slot_delay(request, self.crawl_delay(request))

    def _raise_slot_delay(self, request: Request, delay: float | None) -> None:
        slot = self._slot(request) if delay is not None else None
        if delay is None or slot is None:
            return
        jitter = compat.limit_jitter(slot, MAX_DELAY_JITTER)
        floor = delay / (1.0 - jitter)
        if slot.delay < floor:
            slot.delay = floor
            self.reporter.inc("crawl_delay/applied")
            if self.slot_wait is not None:
                self.slot_wait.widen(floor * (1.0 + jitter))

    def _slot(self, request: Request) -> Slot | None:
        return compat.download_slot(self.crawler, request)

    def pace(self, request: Request, agent: str | None = None) -> Coroutine[Any, Any, None] | None:
        """Keep the origin's delay: the wait for its next fleet-wide turn, if there is one.

        With a shared store, every crawler books its requests to a delayed
        origin in the store, one turn per delay, and sends each at its turn:
        together they keep the delay. The turn is at least this crawler's own
        download-slot gap (``DOWNLOAD_DELAY``, AutoThrottle, randomised up to
        1.5 times), so the slot adds no wait after it. Without a shared store
        (or while it does not answer) the slot's delay keeps it, as
        :meth:`apply_crawl_delay` says. ``None`` (nothing to await) for every
        request without a fleet turn: most of them, at no coroutine's cost.
        ``agent``: as for :meth:`crawl_delay`; the delay is found once, for both.
        """
        if not (
            self._asked
            or self.policies.any
            or (self.request_agents and compat.request_header(request, b"User-Agent"))
        ):
            return None  # no delay asked of the crawler's agent, and no other agent to ask
        delay = self.crawl_delay(request, agent)
        if delay is None:
            return None
        fleet = self.fleet
        if fleet is None:
            self._raise_slot_delay(request, delay)
            return None
        return self._fleet_turn(request, delay, fleet)

    async def _fleet_turn(self, request: Request, delay: float, fleet: CachedStore) -> None:
        slot = self._slot(request)
        # Turns a little wider than the delay: a request reaches the site some
        # time after its turn, and that time varies between crawlers.
        gap = max(delay * (1.0 + FLEET_MARGIN), _slot_gap(slot, self.crawler))
        origin = origin_for(request)
        for _ in range(MAX_REBOOKINGS + 1):
            wait = fleet.reserve(origin, gap)
            if wait is None:
                self._raise_slot_delay(request, delay)  # the store is down: this crawler alone
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
            self.reporter.inc("fleet/rebooked")
        self.reporter.inc("fleet/paced")
