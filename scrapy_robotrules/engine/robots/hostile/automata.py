"""Compiled automata of all files, in one process-wide budget of bytes.

An Aho-Corasick automaton over a hostile file's literals holds ten times
the file's size, outside Python's objects. A file keeps its literals as one
string (less than its own size); the automaton built from them is lent by
this cache, least recently used first out, and built again on demand. So a
crawler of many such files holds at most :data:`DEFAULT_AUTOMATON_BYTES` of
automata, whatever the number of files, and one whose automaton was evicted
pays its construction again on its next check (work in proportion to the
characters of its literals).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

__all__ = [
    "AUTOMATON_BYTES_PER_CHAR",
    "DEFAULT_AUTOMATON_BYTES",
    "AutomatonCache",
    "Holder",
    "automata",
    "set_automaton_bytes",
]

DEFAULT_AUTOMATON_BYTES = 64 * 1024 * 1024
"""Bytes of compiled automata a process holds at most, all files together."""

AUTOMATON_BYTES_PER_CHAR = 32
"""What an automaton weighs per character of its literals: an upper estimate.

Measured (resident memory, ahocorasick-rs contiguous NFA): 21 to 28 bytes
per character for 3,000 to 24,000 literals of 3 to 8 characters, counting
what the allocator keeps after the construction's scratch is freed.
"""


class Holder(Protocol):
    """What holds an automaton the cache may take back."""

    def drop_automaton(self) -> None: ...


class AutomatonCache:
    """Which holders keep their automaton, least recently used first out, within ``max_bytes``.

    The cache holds its holders weakly: a file dropped by its caller gives
    its weight back at once. A holder evicted as it is admitted still
    answers the check at hand with the automaton it just built.
    """

    def __init__(self, max_bytes: int = DEFAULT_AUTOMATON_BYTES) -> None:
        self.max_bytes = max_bytes
        self.weight = 0
        self.built = 0
        """Automata built since the process started (each admission is one)."""
        self.evicted = 0
        self._held: OrderedDict[int, tuple[weakref.ref[Holder], int]] = OrderedDict()
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._held)

    def admit(self, holder: Holder, weight: int, *, built: bool = True) -> None:
        """``holder`` has just built an automaton (or grew): it weighs ``weight`` bytes in all."""
        key = id(holder)
        with self._lock:
            self._forget(key)
            self.built += built
            self._held[key] = (weakref.ref(holder, self._gone(key)), weight)
            self.weight += weight
            self._shrink(self.max_bytes)

    def touch(self, holder: Holder) -> None:
        """``holder`` used its automaton: it is the last to go."""
        with contextlib.suppress(KeyError):
            self._held.move_to_end(id(holder))

    def resize(self, max_bytes: int) -> None:
        with self._lock:
            self.max_bytes = max_bytes
            self._shrink(max_bytes)

    def clear(self) -> None:
        self._shrink(0)

    def _shrink(self, max_bytes: int) -> None:
        with self._lock:
            while self.weight > max_bytes and self._held:
                _, (ref, weight) = self._held.popitem(last=False)
                self.weight -= weight
                self.evicted += 1
                holder = ref()
                if holder is not None:
                    holder.drop_automaton()

    def _forget(self, key: int) -> None:
        with self._lock:
            held = self._held.pop(key, None)
            if held is not None:
                self.weight -= held[1]

    def _gone(self, key: int) -> Callable[[weakref.ref[Holder]], None]:
        def gone(ref: weakref.ref[Holder]) -> None:
            with self._lock:
                held = self._held.get(key)
                if held is not None and held[0] is ref:
                    del self._held[key]
                    self.weight -= held[1]

        return gone


automata = AutomatonCache()
"""The process's cache: every file's automaton is lent by it."""


def set_automaton_bytes(max_bytes: int) -> None:
    """Bound the compiled automata of the whole process to ``max_bytes`` (0: none kept)."""
    if max_bytes < 0:
        raise ValueError(f"automaton budget must be at least 0 bytes, not {max_bytes}")
    automata.resize(max_bytes)
