"""A persistent or shared backend behind a small in-process cache of parsed entries (SPEC 8).

Deciding a request must not cost a round trip: a fresh entry in the cache
decides at once, and the backend is asked only for an origin that has no
fresh entry here (at most once per ``recheck`` seconds per origin, so a
burst of requests for an origin being fetched asks once). What the backend
returns is parsed here again; nothing pickled is ever stored.

When the backend fails, the cache is the store: one WARNING, an ``errors``
event per failed call, no call at all for ``retry_after`` seconds, then
one try; when the backend answers again, an INFO line, and what was fetched
meanwhile is written back.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from typing import TypeVar

from scrapy_robotrules.engine.digests import sha256_of
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE
from scrapy_robotrules.engine.robots.robotstxt import RobotsTxt
from scrapy_robotrules.engine.stores.interface import Backend, Entry, Record, StoreError
from scrapy_robotrules.engine.stores.memory import DEFAULT_CACHE_BYTES, MemoryStore

__all__ = ["CachedStore"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

UNSAVED_LIMIT = 1000
"""Entries fetched while the backend is down, kept to be written back (oldest dropped)."""


class _Failed:
    """What a backend call that failed returns instead of a result."""


FAILED = _Failed()


class CachedStore:
    """A :class:`~.interface.RulesStore` over a :class:`~.interface.Backend`.

    ``on_event`` is called with ``"hits"`` (the backend had a fresh record
    this process did not), ``"misses"`` (it had none) and ``"errors"`` (a
    call failed). ``capacity`` and ``max_bytes`` bound the cache, as for
    :class:`~scrapy_robotrules.engine.stores.memory.MemoryStore`.
    """

    shared = True

    def __init__(
        self,
        backend: Backend,
        *,
        capacity: int | None = 10_000,
        max_bytes: int | None = DEFAULT_CACHE_BYTES,
        max_size: int = DEFAULT_MAX_SIZE,
        clock: Callable[[], float] = time.time,
        on_event: Callable[[str], None] | None = None,
        on_evict: Callable[[Entry], None] | None = None,
        on_adopt: Callable[[Entry, Entry | None], object] | None = None,
        recheck: float = 1.0,
        retry_after: float = 5.0,
    ) -> None:
        self.backend = backend
        self.local = MemoryStore(capacity, on_evict, max_bytes)
        self.max_size = max_size
        self.clock = clock
        self.on_event = on_event
        self.on_adopt = on_adopt
        """Called with each entry taken from the backend (fetched elsewhere, or earlier) and
        the entry it replaces here (``None`` if none was held)."""
        self.recheck = recheck
        self.retry_after = retry_after
        self._checked: dict[str, float] = {}
        """When the backend was last asked about an origin it had nothing fresh for."""
        self._down_since: float | None = None
        self._next_try = 0.0
        self._unsaved: OrderedDict[str, Record] = OrderedDict()

    # The backend's health.

    @property
    def available(self) -> bool:
        """Whether the backend is in use (not down, or due for another try)."""
        return self._down_since is None or time.monotonic() >= self._next_try

    def _event(self, name: str) -> None:
        if self.on_event is not None:
            self.on_event(name)

    def _ask(self, what: str, call: Callable[[], T]) -> T | _Failed:
        """``call()`` on the backend, or ``FAILED`` if it is down or fails now."""
        if not self.available:
            return FAILED
        try:
            result = call()
        except StoreError as exc:
            self._event("errors")
            now = time.monotonic()
            self._next_try = now + self.retry_after
            if self._down_since is None:
                self._down_since = now
                # The store named once; the call once, when the backend names it too.
                problem = exc.problem
                if not problem.startswith(f"{what}: "):
                    problem = f"{what}: {problem}"
                logger.warning(
                    "robots.txt store %(store)s failed (%(problem)s): using the"
                    " in-process memory store until it answers again",
                    {"store": self.backend.name, "problem": problem},
                )
            return FAILED
        if self._down_since is not None:
            logger.info(
                "robots.txt store %(store)s answers again after %(seconds).1f s",
                {"store": self.backend.name, "seconds": time.monotonic() - self._down_since},
            )
            self._down_since = None
            self._write_back()
        return result

    def _write_back(self) -> None:
        while self._unsaved and self._down_since is None:
            origin, record = self._unsaved.popitem(last=False)
            held = self.local.get(origin)
            if held is not None and held.fetched_at > record.fetched_at:
                continue  # fetched again since, and saved then
            if self._ask("save", partial(self.backend.save, record)) is FAILED:
                self._unsaved[origin] = record

    # RulesStore.

    def get(self, origin: str) -> Entry | None:
        local = self.local.get(origin)
        now = self.clock()
        if local is not None and local.is_fresh(now):
            return local
        checked = self._checked.get(origin)
        if checked is not None and now - checked < self.recheck:
            return local
        record = self._ask("load", lambda: self.backend.load(origin))
        if isinstance(record, _Failed):
            return local
        if record is None or record.fresh_until <= now:
            self._event("misses")
            if len(self._checked) >= 4 * (self.local.capacity or 10_000):
                self._checked.clear()
            self._checked[origin] = now
            if record is not None and (local is None or record.fetched_at > local.fetched_at):
                return self._adopt(record)  # stale, but newer than what is here
            return local
        self._event("hits")
        if local is not None and local.fetched_at >= record.fetched_at:
            return local
        return self._adopt(record)

    def put(self, entry: Entry, body: bytes | None = None) -> None:
        self.local.put(entry)
        self._checked.pop(entry.origin, None)
        if body is None and entry.robots is not None:
            # Unreachable, earlier rules kept: they are the stored ones.
            previous = self.load_record(entry.origin)
            if previous is not None:
                body = previous.body
        record = Record(
            entry.origin,
            entry.outcome,
            None if body is None else body[: self.max_size + 1],
            entry.status,
            entry.url,
            entry.fetched_at,
            entry.fresh_until,
        )
        self.save_record(record)

    # Records by key (robots.txt's, and tdmrep.json's under its own key): no parsed cache.

    def load_record(self, key: str) -> Record | None:
        """The backend's record under ``key``; ``None`` if none or no answer."""
        record = self._ask("load", lambda: self.backend.load(key))
        return record if isinstance(record, Record) else None

    def save_record(self, record: Record) -> None:
        """Save ``record`` under its key; kept to be written back while the backend is down."""
        if self._ask("save", lambda: self.backend.save(record)) is not FAILED:
            # Saved: an older record kept from an outage must not overwrite it.
            self._unsaved.pop(record.origin, None)
            return
        self._unsaved[record.origin] = record
        self._unsaved.move_to_end(record.origin)
        while len(self._unsaved) > UNSAVED_LIMIT:
            self._unsaved.popitem(last=False)

    def delete(self, origin: str) -> None:
        self.local.delete(origin)
        self._checked.pop(origin, None)
        self._unsaved.pop(origin, None)
        self._ask("delete", lambda: self.backend.delete(origin))

    def clear(self) -> None:
        """Forget the parsed entries (say, for another agent); the records stay.

        Records are raw bytes, the same for every agent.
        """
        self.local.clear()
        self._checked.clear()

    def __len__(self) -> int:
        return len(self.local)

    # Fleet coordination: ``None`` when the backend cannot answer.

    def refresh(self, origin: str) -> Entry | None:
        """News from the backend: a fresh record for ``origin`` newer than the cached one."""
        record = self._ask("load", lambda: self.backend.load(origin))
        if not isinstance(record, Record) or record.fresh_until <= self.clock():
            return None
        local = self.local.get(origin)
        if local is not None and local.fetched_at >= record.fetched_at:
            return None
        return self._adopt(record)

    def lease(self, origin: str, owner: str, seconds: float) -> bool | None:
        taken = self._ask("lease", lambda: self.backend.lease(origin, owner, seconds))
        return None if isinstance(taken, _Failed) else taken

    def release(self, origin: str, owner: str) -> None:
        self._ask("release", lambda: self.backend.release(origin, owner))

    def reserve(self, origin: str, interval: float) -> float | None:
        wait = self._ask("reserve", lambda: self.backend.reserve(origin, interval))
        return None if isinstance(wait, _Failed) else wait

    # The archive of robots.txt bodies, by SHA-256.

    def archive(self, sha256: str, body: bytes) -> bool:
        """Archive ``body`` under ``sha256``; ``False`` if the backend does not answer.

        Not written back later: bodies are too large to hold through an outage.
        """
        return self._ask("archive", lambda: self.backend.archive(sha256, body)) is not FAILED

    def archived(self, sha256: str) -> bytes | None:
        """The body archived under ``sha256``; ``None`` if none or no answer."""
        body = self._ask("archived", lambda: self.backend.archived(sha256))
        return None if isinstance(body, _Failed) else body

    def eviction(self) -> str | None:
        """The backend's :meth:`~.interface.Backend.eviction`; ``None`` if it does not answer."""
        found = self._ask("eviction", self.backend.eviction)
        return None if isinstance(found, _Failed) else found

    def close(self) -> None:
        self._write_back()
        with suppress(StoreError):
            self.backend.close()

    def _adopt(self, record: Record) -> Entry | None:
        """The record as an entry in the cache (``None`` if it cannot be one)."""
        robots = None
        # A body longer than the size limit is stored cut: its SHA-256 is not known.
        body = record.body
        sha256 = None if body is None or len(body) > self.max_size else sha256_of(body)
        if record.body is not None and record.outcome in (Outcome.RULES, Outcome.UNREACHABLE):
            robots = RobotsTxt.parse(
                record.body, f"{record.origin}/robots.txt", max_size=self.max_size
            )
        elif record.outcome is Outcome.RULES:
            return None  # a record of rules without the file: fetched again
        entry = Entry(
            record.origin,
            record.outcome,
            robots,
            fetched_at=record.fetched_at,
            fresh_until=record.fresh_until,
            status=record.status,
            url=record.url,
            sha256=sha256,
        )
        previous = self.local.peek(record.origin)
        self.local.put(entry)
        self._checked.pop(record.origin, None)
        if self.on_adopt is not None:
            self.on_adopt(entry, previous)
        return entry
