"""What a store keeps and must do (SPEC 8): entries, records, backends, and one entry's answer.

A backend keeps *records*: the raw robots.txt bytes of an origin and how
its fetch ended, never parsed objects (parsing is fast, and bytes mean the
same to every agent and every version of this package). Besides records, a
backend shared by several processes coordinates them:

- a *lease* per origin, so that one process fetches a robots.txt while the
  others wait for its record;
- a *pace* per origin, the next time the fleet may send that origin a
  request, so that Crawl-delay holds for all processes together.

It also keeps an *archive*: every robots.txt body fetched, by its SHA-256,
the name an audit line gives it, kept ``KEEP_ARCHIVE`` seconds
after it was last fetched.

Backends raise :class:`StoreError` when they cannot answer; the caller
(:class:`~scrapy_robotrules.engine.stores.cache.CachedStore`) falls back to memory.
"""

from __future__ import annotations

import itertools
import time
from typing import NamedTuple, Protocol

from scrapy_robotrules.engine.robots.agents import AgentMatch
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.robots.precedence import Precedence
from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt, is_robots_path
from scrapy_robotrules.engine.robots.urls import request_path

__all__ = ["KEEP_ARCHIVE", "KEEP_STALE", "Backend", "Entry", "Record", "RulesStore", "StoreError"]

KEEP_STALE = 7 * 86_400.0
"""Seconds a record is kept after it went stale: stale rules still decide while
they are fetched again (SPEC 8), and a restarted crawl starts from them."""

KEEP_ARCHIVE = 30 * 86_400.0
"""Seconds an archived robots.txt body is kept after it was last fetched: longer than
a record (at most ROBOTRULES_MAX_AGE + KEEP_STALE), because an audit trail is
read after the crawl, often weeks later; a file that does not change is one copy."""


class StoreError(Exception):
    """A backend could not answer (down, unreachable, locked, corrupt).

    ``store`` names the backend (as its ``name``: no credentials) and
    ``problem`` says what went wrong; the message is both. A caller that
    names the store itself shows ``problem``, so no message names it twice.
    """

    def __init__(self, store: str, problem: str) -> None:
        super().__init__(store, problem)
        self.store = store
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.store}: {self.problem}"


class Record(NamedTuple):
    """One origin's robots.txt as a backend keeps it.

    ``body`` is the file that decides: the one just fetched, or for an
    unreachable origin the last one fetched before (``None`` if none).
    """

    origin: str
    outcome: Outcome
    body: bytes | None
    status: int | None
    url: str | None
    fetched_at: float
    fresh_until: float


class Backend(Protocol):
    """What :class:`~scrapy_robotrules.engine.stores.cache.CachedStore` needs of a backend.

    Every method may raise :class:`StoreError`.
    """

    name: str
    """How the backend is named in log lines (no password)."""

    def load(self, origin: str) -> Record | None: ...

    def save(self, record: Record) -> None: ...

    def delete(self, origin: str) -> None: ...

    def lease(self, origin: str, owner: str, seconds: float) -> bool:
        """Take (or renew) the lease on fetching ``origin``; ``False`` if another owner has it."""
        ...

    def release(self, origin: str, owner: str) -> None:
        """Give the lease up, if ``owner`` still holds it."""
        ...

    def reserve(self, origin: str, interval: float) -> float:
        """Book the origin's next turn, ``interval`` seconds after the last one booked.

        Returns the seconds to wait before the booked turn, 0 if it is now.
        """
        ...

    def archive(self, sha256: str, body: bytes) -> None:
        """Keep ``body`` under ``sha256`` (its hex SHA-256) for ``KEEP_ARCHIVE`` seconds from now.

        Idempotent: the same body archived again is one copy, kept longer.
        """
        ...

    def archived(self, sha256: str) -> bytes | None:
        """The body archived under ``sha256``; ``None`` if none (never kept, or expired)."""
        ...

    def eviction(self) -> str | None:
        """Why records, leases and paces may vanish before they expire, as one phrase for a
        log line (a Redis server that evicts keys under ``maxmemory``); ``None`` if they stay.
        """
        ...

    def close(self) -> None: ...


_GENERATIONS = itertools.count(time.time_ns())
"""Each entry's :attr:`Entry.generation`: counted up from the time this process started, in
nanoseconds, so that no entry of a later process (a JOBDIR crawl resumed, whose requests
carry their decisions) is given one an earlier process gave."""


class Entry:
    """What is known of one origin's robots.txt."""

    __slots__ = (
        "fetched_at",
        "fresh_until",
        "generation",
        "origin",
        "outcome",
        "robots",
        "sha256",
        "status",
        "url",
    )

    def __init__(
        self,
        origin: str,
        outcome: Outcome,
        robots: RobotsTxt | None,
        *,
        fetched_at: float,
        fresh_until: float,
        status: int | None = None,
        url: str | None = None,
        sha256: str | None = None,
    ) -> None:
        if outcome is Outcome.RULES and robots is None:
            raise ValueError("an entry with outcome 'rules' needs the parsed robots.txt")
        self.origin = origin
        self.outcome = outcome
        self.robots = robots
        self.fetched_at = fetched_at
        self.fresh_until = fresh_until
        self.status = status
        self.url = url
        self.sha256 = sha256
        """The SHA-256 (hex) of the body ``robots`` was parsed from; ``None`` if not known."""
        self.generation = next(_GENERATIONS)
        """Which entry this is, never given to another (see :data:`_GENERATIONS`): a decision
        made under this entry carries it, and holds while the origin's entry has it."""

    def __repr__(self) -> str:
        return f"<Entry {self.origin} {self.outcome} until {self.fresh_until:.0f}>"

    def is_fresh(self, now: float) -> bool:
        return now < self.fresh_until

    @property
    def weight(self) -> int:
        """Estimated bytes held: the parsed file's weight, or a small record."""
        return _ENTRY_WEIGHT + (self.robots.weight if self.robots is not None else 0)

    def _rules(self) -> RobotsTxt | None:
        """The file whose rules decide: the one fetched, or an unreachable origin's earlier one.

        ``None``: the outcome decides for the whole origin (SPEC 8).
        """
        robots = self.robots
        return robots if robots is not None and self.outcome in _DECIDED_BY_RULES else None

    def _outcome_allows(self, path: str) -> bool:
        """Without rules: only "no robots.txt" allows, and ``/robots.txt`` itself always."""
        return self.outcome is Outcome.ALLOW_ALL or is_robots_path(path)

    def allowed(
        self, url: str, agent: str, precedence: Precedence, agent_match: AgentMatch
    ) -> bool:
        robots = self._rules()
        if robots is not None:
            return robots.allowed(url, agent, precedence, agent_match)
        return self._outcome_allows(request_path(url))

    def explain(
        self, url: str, agent: str, precedence: Precedence, agent_match: AgentMatch
    ) -> Decision:
        """The decision for ``url``; an unreachable origin keeps earlier rules if it has them."""
        robots = self.robots  # self._rules(), inlined: every fresh decision of a crawl
        if robots is not None and self.outcome in _DECIDED_BY_RULES:
            return robots.explain(url, agent, precedence, agent_match)
        path = request_path(url)
        allowed = self._outcome_allows(path)
        # /robots.txt itself: the decision's reason says it is always allowed.
        note = "" if is_robots_path(path) else self._note()
        return Decision(allowed, None, [], url, path, agent, precedence, agent_match, note)

    def _note(self) -> str:
        status = f"HTTP {self.status}" if self.status is not None else "no answer"
        if self.outcome is Outcome.ALLOW_ALL:
            return f"no robots.txt ({status}): everything allowed"
        if self.outcome is Outcome.DISALLOW_ALL:
            return f"robots.txt refused ({status}): everything disallowed"
        return f"robots.txt unreachable ({status}): disallowed for now"


_DECIDED_BY_RULES = (Outcome.RULES, Outcome.UNREACHABLE)
_ENTRY_WEIGHT = 256


class RulesStore(Protocol):
    """Entries by origin (``scheme://host[:port]``)."""

    def get(self, origin: str) -> Entry | None: ...

    def put(self, entry: Entry, body: bytes | None = None) -> None:
        """Keep ``entry``; ``body``, the file it was parsed from, is for stores that persist."""
        ...

    def delete(self, origin: str) -> None: ...

    def clear(self) -> None: ...

    def __len__(self) -> int: ...
