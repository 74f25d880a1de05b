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

__all__ = ["DEFAULT_CACHE_BYTES", "Entry", "MemoryStore", "RulesStore"]


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

    @property
    def weight(self) -> int:
        """Estimated bytes held: the parsed file's weight, or a small record."""
        return _ENTRY_WEIGHT + (self.robots.weight if self.robots is not None else 0)

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
_ENTRY_WEIGHT = 256

DEFAULT_CACHE_BYTES = 512 * 1024 * 1024
"""What a rules cache may weigh by default (see :attr:`Entry.weight`): 512 MiB."""


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
    """Entries in a dict, least recently used dropped beyond ``capacity`` or ``max_bytes``.

    A count of origins alone does not bound memory: one robots.txt of 500 KiB
    of wildcard rules weighs as much as thousands of ordinary ones. Entries
    are also weighed (:attr:`Entry.weight`), and the least recently used are
    dropped while the total is above ``max_bytes`` (the newest entry always
    stays). ``on_evict`` is called with each dropped entry, so callers can count.
    """

    def __init__(
        self,
        capacity: int | None = None,
        on_evict: Callable[[Entry], None] | None = None,
        max_bytes: int | None = DEFAULT_CACHE_BYTES,
    ) -> None:
        if capacity is not None and capacity < 1:
            raise ValueError(f"capacity must be at least 1 or None, not {capacity!r}")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1 or None, not {max_bytes!r}")
        self.capacity = capacity
        self.max_bytes = max_bytes
        self.on_evict = on_evict
        self.weight = 0
        """The entries' total weight, in estimated bytes."""
        self._entries: OrderedDict[str, Entry] = OrderedDict()

    def get(self, origin: str) -> Entry | None:
        entry = self._entries.get(origin)
        if entry is not None:
            self._entries.move_to_end(origin)
        return entry

    def put(self, entry: Entry, body: bytes | None = None) -> None:
        replaced = self._entries.pop(entry.origin, None)
        if replaced is not None:
            self.weight -= replaced.weight
        self._entries[entry.origin] = entry
        self.weight += entry.weight
        capacity = self.capacity
        max_bytes = self.max_bytes
        while len(self._entries) > 1 and (
            (capacity is not None and len(self._entries) > capacity)
            or (max_bytes is not None and self.weight > max_bytes)
        ):
            _, dropped = self._entries.popitem(last=False)
            self.weight -= dropped.weight
            if self.on_evict is not None:
                self.on_evict(dropped)

    def delete(self, origin: str) -> None:
        dropped = self._entries.pop(origin, None)
        if dropped is not None:
            self.weight -= dropped.weight

    def clear(self) -> None:
        self._entries.clear()
        self.weight = 0

    def __len__(self) -> int:
        return len(self._entries)
