"""Where rules live between fetches: in memory, or in SQLite or Redis shared by a fleet (SPEC 8).

:mod:`.interface` says what a store and a backend must do, :mod:`.memory`
and :mod:`.cache` keep parsed entries in this process, :mod:`.sqlite` and
:mod:`.redis` keep raw records for every process, and :mod:`.naming` reads
and shows (without secrets) a ``ROBOTRULES_STORE`` value. The two factories
below are the only place that knows every kind.
"""

from __future__ import annotations

from collections.abc import Callable

from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE
from scrapy_robotrules.engine.stores.cache import CachedStore
from scrapy_robotrules.engine.stores.interface import (
    KEEP_ARCHIVE,
    KEEP_STALE,
    Backend,
    Entry,
    Record,
    RulesStore,
    StoreError,
)
from scrapy_robotrules.engine.stores.memory import DEFAULT_CACHE_BYTES, MemoryStore, WeightedLRU
from scrapy_robotrules.engine.stores.naming import (
    STORE_SCHEMES,
    redact_url,
    sqlite_path,
    store_kind,
)

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "KEEP_ARCHIVE",
    "KEEP_STALE",
    "STORE_SCHEMES",
    "Backend",
    "CachedStore",
    "Entry",
    "MemoryStore",
    "Record",
    "RulesStore",
    "StoreError",
    "WeightedLRU",
    "open_backend",
    "open_store",
    "redact_url",
    "store_kind",
]


def open_backend(url: str, *, timeout: float = 1.0) -> Backend:
    """The backend a ``sqlite:`` or ``redis:`` URL names; ``timeout`` bounds each call.

    Opening does not contact a server: an unreachable one shows up as
    :class:`StoreError` on first use, when the caller can fall back.
    """
    kind = store_kind(url)
    if kind == "sqlite":
        from scrapy_robotrules.engine.stores.sqlite import SQLiteBackend

        return SQLiteBackend(sqlite_path(url), timeout=timeout, name=redact_url(url))
    if kind == "redis":
        from scrapy_robotrules.engine.stores.redis import RedisBackend

        return RedisBackend(url, timeout=timeout)
    raise ValueError("the memory store has no backend")


def open_store(
    url: str,
    *,
    capacity: int | None = 10_000,
    max_bytes: int | None = DEFAULT_CACHE_BYTES,
    max_size: int = DEFAULT_MAX_SIZE,
    on_event: Callable[[str], None] | None = None,
    on_evict: Callable[[Entry], None] | None = None,
    timeout: float = 1.0,
) -> MemoryStore | CachedStore:
    """The store a ``ROBOTRULES_STORE`` value names: ``memory``, ``sqlite:...``, ``redis://...``."""
    if url == "memory":
        return MemoryStore(capacity, on_evict, max_bytes)
    return CachedStore(
        open_backend(url, timeout=timeout),
        capacity=capacity,
        max_bytes=max_bytes,
        max_size=max_size,
        on_event=on_event,
        on_evict=on_evict,
    )
