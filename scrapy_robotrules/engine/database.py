"""A rules database for many hosts, in the manner of Perl's WWW::RobotRules.

Feed it robots.txt files as they are fetched (``parse``), ask it about any
URL (``allowed``): ``None`` means "no fresh rules for that origin, fetch its
robots.txt"; ``explain`` gives the same answer with its reasons (SPEC 7),
both from the origin's fresh entry. Origins are scheme, host and port, so
``http://a.com`` and ``https://a.com`` are kept apart (SPEC 8). Changing the agent forgets every
origin, as WWW::RobotRules does, since the same files may say other things
to another crawler.

Rules can outlive the process, as with ``WWW::RobotRules::AnyDBM_File``:
``store="sqlite:robots.db"`` keeps them in a file,
``store="redis://host:6379/0"`` in a Redis server shared by many crawlers.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from scrapy_robotrules.engine.digests import sha256_of
from scrapy_robotrules.engine.robots.agents import TOKEN, AgentMatch, check_agent_match
from scrapy_robotrules.engine.robots.fetch_outcomes import DEFAULT_MAX_AGE, Outcome
from scrapy_robotrules.engine.robots.hostile.automata import set_automaton_bytes
from scrapy_robotrules.engine.robots.precedence import MOST_SPECIFIC, Precedence, check_precedence
from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE
from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt
from scrapy_robotrules.engine.robots.urls import origin_of
from scrapy_robotrules.engine.stores import (
    DEFAULT_CACHE_BYTES,
    Entry,
    MemoryStore,
    RulesStore,
    open_store,
)

__all__ = ["RobotRules"]


class RobotRules:
    """robots.txt rules of many origins, for one crawler.

    At most ``capacity`` origins are held, and at most ``cache_bytes`` of
    their estimated weight (:attr:`RobotsTxt.weight`); the least recently
    used go first, and are counted in :attr:`evicted`. ``automaton_bytes``
    bounds the compiled automata of large wildcard sets, for the whole
    process (:mod:`.hostile.automata`); ``None`` leaves that bound as it is.
    ``clock`` gives the time of day, in epoch seconds, for every reading of
    freshness.
    """

    def __init__(
        self,
        agent: str,
        precedence: Precedence = MOST_SPECIFIC,
        agent_match: AgentMatch = TOKEN,
        capacity: int | None = None,
        *,
        store: RulesStore | str | None = None,
        max_size: int = DEFAULT_MAX_SIZE,
        cache_bytes: int | None = DEFAULT_CACHE_BYTES,
        automaton_bytes: int | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if automaton_bytes is not None:
            # Process-wide, not this database's: the last one set wins.
            set_automaton_bytes(automaton_bytes)
        self._agent = agent
        self.precedence = check_precedence(precedence)
        self.agent_match = check_agent_match(agent_match)
        self.evicted = 0
        self.max_size = max_size
        self.clock = clock
        """Read at each use, never kept: replacing it moves this database's time
        (a simulation, or a test that makes rules stale without waiting)."""
        if isinstance(store, str):
            store = open_store(
                store,
                capacity=capacity,
                max_bytes=cache_bytes,
                max_size=max_size,
                on_evict=self._count,
            )
        if store is None:
            store = MemoryStore(capacity, self._count, cache_bytes)
        self.store: RulesStore = store

    def _count(self, _: Entry) -> None:
        self.evicted += 1

    @property
    def agent(self) -> str:
        return self._agent

    @agent.setter
    def agent(self, agent: str) -> None:
        if agent != self._agent:
            self._agent = agent
            self.store.clear()

    def parse(
        self, robots_url: str, content: str | bytes, fresh_until: float | None = None
    ) -> RobotsTxt:
        """Remember the robots.txt fetched from ``robots_url``, fresh until ``fresh_until``.

        ``fresh_until`` is in epoch seconds; by default 24 hours from now.
        """
        robots = RobotsTxt.parse(content, robots_url, max_size=self.max_size)
        body = content.encode("utf-8") if isinstance(content, str) else content
        self.put(robots_url, Outcome.RULES, robots, fresh_until=fresh_until, body=body)
        return robots

    def put(
        self,
        robots_url: str,
        outcome: Outcome,
        robots: RobotsTxt | None = None,
        *,
        fresh_until: float | None = None,
        status: int | None = None,
        final_url: str | None = None,
        body: bytes | None = None,
        sha256: str | None = None,
    ) -> Entry:
        """Record a fetch outcome for the origin of ``robots_url``.

        ``body``, the file ``robots`` was parsed from, is what persistent
        stores keep; the memory store ignores it. The entry is named by its
        SHA-256, or by ``sha256`` without a body (earlier rules kept).
        """
        now = self.clock()
        entry = Entry(
            origin_of(robots_url),
            outcome,
            robots,
            fetched_at=now,
            fresh_until=now + DEFAULT_MAX_AGE if fresh_until is None else fresh_until,
            status=status,
            url=final_url,
            sha256=sha256 if body is None else sha256_of(body),
        )
        self.store.put(entry, body)
        return entry

    def entry(self, url: str) -> Entry | None:
        """What is held for the origin of ``url``, fresh or not."""
        return self.store.get(origin_of(url))

    def fresh_entry(self, url: str) -> Entry | None:
        entry = self.entry(url)
        if entry is None or not entry.is_fresh(self.clock()):
            return None
        return entry

    def allowed(self, url: str) -> bool | None:
        """Whether the agent may fetch ``url``; ``None`` if no fresh rules are held."""
        entry = self.fresh_entry(url)
        if entry is None:
            return None
        return entry.allowed(url, self._agent, self.precedence, self.agent_match)

    def explain(self, url: str) -> Decision | None:
        """The decision for ``url`` with its reasons; ``None`` if no fresh rules are held."""
        entry = self.fresh_entry(url)
        if entry is None:
            return None
        return entry.explain(url, self._agent, self.precedence, self.agent_match)

    def crawl_delay(self, url: str) -> float | None:
        """``Crawl-delay`` for the agent at the origin of ``url``, if held and set."""
        entry = self.entry(url)
        if entry is None or entry.robots is None:
            return None
        return entry.robots.crawl_delay(self._agent, self.agent_match)

    def forget(self, url: str) -> None:
        self.store.delete(origin_of(url))

    def __len__(self) -> int:
        return len(self.store)

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self.entry(url) is not None
