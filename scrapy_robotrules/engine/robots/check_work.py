"""What a file's checks cost, counted in units of work rather than time.

A check that tried every rule, or walked every bucket of rules, shows as a
count, the same on every machine: the tests bound work by these counts
(``tests/performance``), and benchmarks may show them. A file counts once
asked to (:meth:`.RobotsTxt.count_work`), and only then: every check of a
file of wildcard rules walks their buckets, and a count kept there always
would cost it. The bucket columns a check reads item by item are then
swapped for ones that count their reads (:class:`CountedReads`); an
automaton's work is counted per check. Plain prefix rules are never
counted: a check finds them by bisection, whatever their number.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

__all__ = ["CheckWork", "Column", "CountedReads"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class CheckWork:
    """What a file's checks have cost since :meth:`.RobotsTxt.count_work`, in units of work.

    A file's wildcard rules are bucketed by their text before the ``*``; a
    file of many has those with a literal after a ``*`` (their needle)
    found by an automaton over the needles instead.
    """

    __slots__ = (
        "buckets_walked",
        "reports",
        "rules_ranked",
        "rules_read_again",
        "rules_tried",
        "windows_looked_up",
    )

    def __init__(self) -> None:
        self.buckets_walked = 0
        """Keys of buckets of wildcard rules a check compared with its path: a bisection's,
        then those of the buckets it walked."""
        self.rules_tried = 0
        """Wildcard rules tried against a path one by one: each a search or a match of it."""
        self.rules_ranked = 0
        """Rules an automaton found in a path and ranked, or, after a flood of its reports,
        rules walked in rank order."""
        self.reports = 0
        """Needles an automaton reported in the paths it read."""
        self.windows_looked_up = 0
        """Windows of short paths looked up among the needles, while that costs less than
        building the automaton (see :mod:`.hostile.windows`)."""
        self.rules_read_again = 0
        """Rules read again from the file's text: to show one
        (:meth:`.RobotsTxt.explain`), or to match a wildcard rule whose pattern is not kept."""

    def clear(self) -> None:
        """Count from nought again: what the next checks cost."""
        for name in self.__slots__:
            setattr(self, name, 0)

    def __repr__(self) -> str:
        counts = ", ".join(f"{name}={getattr(self, name)}" for name in self.__slots__)
        return f"CheckWork({counts})"


class Column(Protocol[T_co]):
    """A column of an index as a check reads it: one item at a time, or bisected."""

    def __getitem__(self, index: int, /) -> T_co: ...

    def __len__(self) -> int: ...


class CountedReads(Generic[T]):
    """A column whose items, read one at a time, are counted into a field of a :class:`CheckWork`.

    Put in place of a column a check reads item by item (one item per
    bucket walked, say), once its file counts: the check is the same code
    whether it counts or not, and a file that does not count pays nothing.
    """

    __slots__ = ("_field", "_items", "_work")

    def __init__(self, items: Column[T], work: CheckWork, field: str) -> None:
        self._items, self._work, self._field = items, work, field

    @classmethod
    def of(cls, column: Column[T], work: CheckWork, field: str) -> CountedReads[T]:
        """``column``'s reads counted into ``work`` (and no longer where they were)."""
        if isinstance(column, CountedReads):
            column = column._items
        return cls(column, work, field)

    def __getitem__(self, index: int, /) -> T:
        work, field = self._work, self._field
        setattr(work, field, getattr(work, field) + 1)
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)
