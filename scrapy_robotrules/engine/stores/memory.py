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

from .interface import Entry

__all__ = ["DEFAULT_CACHE_BYTES", "MemoryStore"]


DEFAULT_CACHE_BYTES = 512 * 1024 * 1024
"""What a rules cache may weigh by default (see :attr:`Entry.weight`): 512 MiB."""


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
