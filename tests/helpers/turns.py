"""Fleet-wide turns as a crawler sees them, and the check that they are an interval apart.

A store books a turn on its own clock and answers with the wait until it;
the caller knows that clock's "now" only to within the call's duration,
which a busy machine stretches. So a turn is known as a span, and the
check asks whether turns an interval apart fit within the spans seen.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["Turn", "assert_turns_apart"]


class Turn(NamedTuple):
    """A booked turn: ``wait`` from some moment between ``before`` and ``after`` the call."""

    before: float
    wait: float
    after: float

    @property
    def earliest(self) -> float:
        return self.before + self.wait

    @property
    def latest(self) -> float:
        return self.after + self.wait


def assert_turns_apart(turns: Iterable[Turn], interval: float) -> list[Turn]:
    """Assert that turns ``interval`` apart exist within the spans seen; the turns, in order."""
    ordered = sorted(turns, key=lambda turn: turn.earliest)
    at = ordered[0].earliest
    for turn in ordered[1:]:
        at = max(turn.earliest, at + interval)
        assert at <= turn.latest + 1e-5, (turn, at)
    return ordered
