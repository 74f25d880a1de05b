"""Deciding a request: its origin's rules, and everything else that has a say (SPEC 3-8).

:class:`Decider` is the one object that decides. The scheduler asks it as a
request is scheduled (:meth:`Decider.decide_now`, which never waits: ``None``
means park the request), the downloader middleware as it is downloaded
(:meth:`Decider.decide`, which waits for the origin's rules). Its
collaborators come in through its constructor: the rules database, the
fetches (which start a file's fetch and hold an origin's waiters), the site
policies, the pins, the agent choice (politeness), the answers kept by URL and
the tdmrep.json files.

In order, for a request of an origin:

- ``/robots.txt`` itself is allowed (SPEC 4);
- a site policy that ignores robots.txt, or gives its own file, decides
  without a fetch (:mod:`..config.policy_lookup`);
- no rules at hand: their fetch starts, and the request waits (parked);
- an unreachable origin without earlier rules, or a file that is not the
  pinned one, holds the request until ``ROBOTRULES_UNREACHABLE_TIMEOUT``
  (RFC 9309 2.3.1.4), then drops it;
- rules past their age decide while the next file is fetched (SPEC 8);
- the answer: kept by URL for the same entry and agent, else the file's
  ``explain`` for the request's agent, adjusted by a site policy, refused
  for a declared purpose robots.txt refuses; then tdmrep.json, if the crawl
  declares ``tdm``, which may refuse it too.

What the decision was made under is carried in ``request.meta``
(:mod:`..requestmeta`), so that a request is decided once. The time of day
(fetched when, fresh until, unreachable since) is read from ``db.clock``
alone; timers run on the loop's clock.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scrapy.utils.httpobj import urlparse_cached

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.config.policy_lookup import adjusted
from scrapy_robotrules.crawl.exceptions import RobotsTxtNotFetched, RobotsTxtUnreachable
from scrapy_robotrules.crawl.requestmeta import (
    DECIDED,
    OFFERED,
    STALE,
    Carried,
    carried_in,
    carry,
    origin_for,
    same_rules,
)
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt, is_robots_path
from scrapy_robotrules.engine.robots.urls import request_path
from scrapy_robotrules.engine.stores.memory import WeightedLRU
from scrapy_robotrules.engine.usage.preferences import refuse_purposes

if TYPE_CHECKING:
    from scrapy import Request

    from scrapy_robotrules.crawl.config.policy_lookup import SitePolicies
    from scrapy_robotrules.crawl.config.settings import RobotRulesConfig
    from scrapy_robotrules.crawl.deciding.reuse import AnswerCache, Carrier
    from scrapy_robotrules.crawl.fetching.fetches import Fetches
    from scrapy_robotrules.crawl.fetching.pinning import Held, PinHolds
    from scrapy_robotrules.crawl.fetching.tdmrep_files import TdmRepFiles
    from scrapy_robotrules.crawl.pacing.politeness import Politeness
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.database import RobotRules
    from scrapy_robotrules.engine.operator_tools.site_policies import Policy
    from scrapy_robotrules.engine.stores import Entry

__all__ = ["Decider"]

_UNCHECKED_SCHEMES = ("data", "file")
_HOST_FOLLOWS = re.compile(r"https?://[a-zA-Z0-9]")
"""An http(s) URL whose host name starts right after ``//`` (no user info, no brackets)."""
_AGENT = b"User-Agent"
_EMPTY = RobotsTxt.parse(b"")


def _may_be_robots_path(url: str) -> bool:
    """Whether the path of ``url`` may be /robots.txt (percent-encoded letters included)."""
    return "/robots.txt" in url or "%" in url


class Decider:
    """Decides requests for one crawler, from its origins' rules and what else has a say."""

    def __init__(
        self,
        *,
        config: RobotRulesConfig,
        db: RobotRules,
        fetches: Fetches,
        politeness: Politeness,
        policies: SitePolicies,
        pins: PinHolds | None,
        tdmrep: TdmRepFiles | None,
        answers: AnswerCache,
        carrier: Carrier,
        reporter: Reporter,
        carries_answers: bool,
    ) -> None:
        self.config = config
        self.db = db
        self.fetches = fetches
        self.origins = fetches.origins
        self.politeness = politeness
        self.policies = policies
        self.pins = pins
        self.tdmrep = tdmrep
        self.answers = answers
        self.carrier = carrier
        self.reporter = reporter
        self.carries_answers = carries_answers
        """Whether an allowed answer holds for a duplicate as it is: not when a site policy,
        a tdmrep.json or the audit trail has its own say on each request."""
        store = db.store
        # A duplicate is no use of its origin's rules (the scheduler's inner
        # scheduler drops it): the in-memory store is asked without moving the origin up.
        self._held = store.peek if isinstance(store, WeightedLRU) else store.get

    def allowed_again(self, request: Request) -> bool:
        """Whether ``request`` takes the latest answer for its URL as it is, without deciding.

        So for a duplicate offer (a page links its site's pages again) of a
        URL allowed for the crawler's own agent, under the robots.txt entry
        still held (not whether it is still fresh: the scheduler drops a
        duplicate, and the downloader middleware asks again for one it keeps),
        when the request names no agent of its own in its ``User-Agent``.
        It is then counted offered and allowed, and carries that answer.
        """
        url = request.url
        answer = self.answers.by_url.get(url)
        carried = None if answer is None else answer.carried
        if carried is None:
            return False
        meta = request.meta
        if meta.get(OFFERED) == url or meta.get("dont_obey_robotstxt"):
            return False
        if not same_rules(self._held(carried.origin), carried.generation):
            return False
        if self.politeness.request_agents and compat.request_header(request, _AGENT):
            return False
        meta[OFFERED] = meta[DECIDED] = url
        carry(meta, carried)
        reporter = self.reporter
        reporter.allowed_again += 1
        if reporter.flush_call is None:
            reporter.schedule_flush()
        return True

    def held_by_pin(self, request: Request) -> bool:
        """Whether ``request``'s origin has a file other than its pinned one (pinning.py)."""
        return self.pins is not None and self.pins.differ(request)

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
            if self.fetches.closing():
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
                decision = self._answer(origin, url, entry, agent, policy)
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

    def _answer(
        self, origin: str, url: str, entry: Entry, agent: str, policy: Policy | None
    ) -> Decision:
        """What the rules of ``entry`` answer for ``url`` and ``agent``, kept by URL.

        A site policy may ask under another agent, precedence or matching, and
        adjust the answer; a purpose the crawl declares that robots.txt refuses
        (usage preferences) turns an allowed answer into a refusal.
        """
        db = self.db
        asked, precedence, match = agent, db.precedence, db.agent_match
        if policy is not None:
            asked, precedence, match = policy.choose(agent, precedence, match)
        decision = entry.explain(url, asked, precedence, match)
        skipped = self.politeness.skipped.get(origin)
        if skipped is not None or policy is not None:
            decision = adjusted(decision, policy, skipped)
        if self.config.purposes and decision.allowed and entry.robots is not None:
            decision = refuse_purposes(entry.robots, decision, self.config.purposes)
        again = self.carries_answers and decision.allowed and agent is db.agent
        self.answers.put(url, origin, entry, agent, decision, again=again)
        return decision

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
