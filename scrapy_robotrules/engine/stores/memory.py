"""The in-memory store: parsed entries by origin, bounded in origins and in bytes (SPEC 8).

What an origin's entry holds is what any store must keep: the outcome of
the last fetch, the parsed file (if there is one), and when it goes stale.
Persistent and shared stores (:mod:`.cache` over :mod:`.sqlite` or
:mod:`.redis`) implement the same methods, keeping the raw robots.txt bytes
rather than parsed objects.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from scrapy_robotrules.engine.stores.interface import Entry

__all__ = ["DEFAULT_CACHE_BYTES", "MemoryStore", "WeightedLRU"]


DEFAULT_CACHE_BYTES = 512 * 1024 * 1024
"""What a rules cache may weigh by default (see :attr:`Entry.weight`): 512 MiB."""


class Weighed(Protocol):
    @property
    def weight(self) -> int:
        """Estimated bytes held."""
        ...


V = TypeVar("V", bound=Weighed)


class WeightedLRU(Generic[V]):
    """Values by key, least recently used dropped beyond ``capacity`` or ``max_bytes``.

    A count alone does not bound memory: one robots.txt of 500 KiB of
    wildcard rules weighs as much as thousands of ordinary ones. Values are
    also weighed (their ``weight``), and the least recently used are dropped
    while the total is above ``max_bytes`` (the newest value always stays).
    ``on_evict`` is called with each dropped value, so callers can count.
    """

    def __init__(
        self,
        capacity: int | None = None,
        on_evict: Callable[[V], None] | None = None,
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
        """The values' total weight, in estimated bytes."""
        self._values: OrderedDict[str, V] = OrderedDict()
        self.peek: Callable[[str], V | None] = self._values.get
        """The value of a key, its place unchanged (the dictionary's own ``get``: no Python
        call, for a crawl's duplicate offers)."""

    def get(self, key: str) -> V | None:
        """The value of ``key``, now the most recently used."""
        value = self._values.get(key)
        if value is not None:
            self._values.move_to_end(key)
        return value

    def keep(self, key: str, value: V) -> None:
        replaced = self._values.pop(key, None)
        if replaced is not None:
            self.weight -= replaced.weight
        values = self._values
        values[key] = value
        self.weight += value.weight
        capacity = self.capacity
        max_bytes = self.max_bytes
        while len(values) > 1 and (
            (capacity is not None and len(values) > capacity)
            or (max_bytes is not None and self.weight > max_bytes)
        ):
            _, dropped = values.popitem(last=False)
            self.weight -= dropped.weight
            if self.on_evict is not None:
                self.on_evict(dropped)

    def delete(self, key: str) -> None:
        dropped = self._values.pop(key, None)
        if dropped is not None:
            self.weight -= dropped.weight

    def clear(self) -> None:
        self._values.clear()
        self.weight = 0

    def __len__(self) -> int:
        return len(self._values)


class MemoryStore(WeightedLRU[Entry]):
    """Entries by origin in a :class:`WeightedLRU` (weighed by :attr:`Entry.weight`)."""

    def put(self, entry: Entry, body: bytes | None = None) -> None:
        self.keep(entry.origin, entry)
