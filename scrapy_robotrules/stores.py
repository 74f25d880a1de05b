"""Where a rules database keeps its entries: a small interface, and the in-memory store.

What an origin's entry holds is what any store must keep: the outcome of
the last fetch, the parsed file (if there is one), and when it goes stale.
Persistent and shared stores (:mod:`.cached_store`) implement the same
methods, keeping the raw robots.txt bytes rather than parsed objects.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from .fetch_policy import Outcome
from .robotstxt import Decision, RobotsTxt, is_robots_path
from .urls import request_path

__all__ = ["Entry", "MemoryStore", "RulesStore"]


class Entry:
    """What is known of one origin's robots.txt."""

    __slots__ = ("fetched_at", "fresh_until", "origin", "outcome", "robots", "status", "url")

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

    def __repr__(self) -> str:
        return f"<Entry {self.origin} {self.outcome} until {self.fresh_until:.0f}>"

    def is_fresh(self, now: float) -> bool:
        return now < self.fresh_until

    def explain(self, url: str, agent: str, precedence: str, agent_match: str) -> Decision:
        """The decision for ``url``; an unreachable origin keeps earlier rules if it has them."""
        if self.robots is not None and self.outcome in (Outcome.RULES, Outcome.UNREACHABLE):
            return self.robots.explain(url, agent, precedence, agent_match)
        if is_robots_path(request_path(url)):
            return _EMPTY.explain(url, agent, precedence, agent_match)
        allowed = self.outcome is Outcome.ALLOW_ALL
        status = f"HTTP {self.status}" if self.status is not None else "no answer"
        notes = {
            Outcome.ALLOW_ALL: f"no robots.txt ({status}): everything allowed",
            Outcome.DISALLOW_ALL: f"robots.txt refused ({status}): everything disallowed",
            Outcome.UNREACHABLE: f"robots.txt unreachable ({status}): disallowed for now",
        }
        return Decision.without_rules(
            url, agent, precedence, agent_match, allowed=allowed, note=notes[self.outcome]
        )

    def allowed(self, url: str, agent: str, precedence: str, agent_match: str) -> bool:
        if self.robots is not None and self.outcome in (Outcome.RULES, Outcome.UNREACHABLE):
            return self.robots.allowed(url, agent, precedence, agent_match)
        return self.outcome is Outcome.ALLOW_ALL or is_robots_path(request_path(url))


_EMPTY = RobotsTxt.parse(b"")


class RulesStore(Protocol):
    """Entries by origin (``scheme://host[:port]``)."""

    def get(self, origin: str) -> Entry | None: ...

    def put(self, entry: Entry, body: bytes | None = None) -> None:
        """Keep ``entry``; ``body``, the file it was parsed from, is for stores that persist."""
        ...

    def delete(self, origin: str) -> None: ...

    def clear(self) -> None: ...

    def __len__(self) -> int: ...


class MemoryStore:
    """Entries in a dict, least recently used dropped beyond ``capacity``.

    ``on_evict`` is called with each dropped entry, so callers can count.
    """

    def __init__(
        self, capacity: int | None = None, on_evict: Callable[[Entry], None] | None = None
    ) -> None:
        if capacity is not None and capacity < 1:
            raise ValueError(f"capacity must be at least 1 or None, not {capacity!r}")
        self.capacity = capacity
        self.on_evict = on_evict
        self._entries: OrderedDict[str, Entry] = OrderedDict()

    def get(self, origin: str) -> Entry | None:
        entry = self._entries.get(origin)
        if entry is not None:
            self._entries.move_to_end(origin)
        return entry

    def put(self, entry: Entry, body: bytes | None = None) -> None:
        self._entries[entry.origin] = entry
        self._entries.move_to_end(entry.origin)
        if self.capacity is not None:
            while len(self._entries) > self.capacity:
                _, dropped = self._entries.popitem(last=False)
                if self.on_evict is not None:
                    self.on_evict(dropped)

    def delete(self, origin: str) -> None:
        self._entries.pop(origin, None)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
