"""Per-origin fetch state: the fetch under way, who waits for it, how long it has failed.

One :class:`OriginState` per origin (scheme, host, port; SPEC 8) while it
needs one: a fetch runs, requests wait, or its robots.txt is unreachable (the
back-off and the unreachable timeout of SPEC 8 run from here). An origin's
unreachable state lives in one place, its :class:`Outage`, moved in step with
each new robots.txt entry by :meth:`OriginState.settle` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome

if TYPE_CHECKING:
    from scrapy import Request
    from twisted.internet.defer import Deferred

    from scrapy_robotrules.engine.stores import Entry

__all__ = ["OriginState", "Origins", "Outage", "wake"]


class Outage:
    """An origin whose robots.txt is unreachable: since when, how many tries, the last error."""

    __slots__ = ("failures", "last_error", "since")

    def __init__(self, since: float) -> None:
        self.since = since
        self.failures = 0
        self.last_error = ""


class OriginState:
    """The fetch state of one origin: the fetch under way, who waits, how it failed."""

    __slots__ = (
        "fetching",
        "name",
        "outage",
        "parked",
        "retry_call",
        "robots_due",
        "robots_url",
        "timeout_call",
        "trigger",
        "waiters",
    )

    def __init__(self, name: str, trigger: Request) -> None:
        self.name = name
        self.robots_url = f"{name}/robots.txt"
        self.trigger = trigger
        """The latest request that needed this origin: robots.txt fetches copy its meta."""
        self.fetching = False
        self.robots_due = False
        """The next fetch is of robots.txt too (else of tdmrep.json only)."""
        self.waiters: list[Deferred[Entry | None]] = []
        self.parked = 0
        """How many of the waiters are parked requests (outside scheduler and downloader)."""
        self.outage: Outage | None = None
        """Set while its robots.txt is unreachable: see :meth:`settle`."""
        self.retry_call: compat.Timer | None = None
        self.timeout_call: compat.Timer | None = None

    @property
    def idle(self) -> bool:
        return not (self.fetching or self.waiters or self.retry_call or self.timeout_call)

    @property
    def last_error(self) -> str:
        return self.outage.last_error if self.outage is not None else ""

    def settle(self, entry: Entry, detail: str = "") -> bool:
        """Bring the outage in step with the origin's new ``entry``; whether it just began.

        Unreachable: one more failure (``detail`` says of what), since the
        first one. Otherwise the outage ends, and its timers with it.
        """
        if entry.outcome is Outcome.UNREACHABLE:
            began = self.outage is None
            if self.outage is None:
                self.outage = Outage(entry.fetched_at)
            self.outage.failures += 1
            self.outage.last_error = detail
            return began
        self.outage = None
        self.cancel_timers()
        return False

    def cancel_timers(self) -> None:
        for call in (self.retry_call, self.timeout_call):
            if call is not None:
                call.cancel()
        self.retry_call = self.timeout_call = None


def wake(waiters: list[Deferred[Entry | None]], entry: Entry | None) -> None:
    """Wake each waiter with ``entry`` (what to decide with; ``None``: no rules)."""
    # Each waiter has its own Deferred: one shared by many would hand
    # the later ones whatever the earlier ones' callbacks returned.
    for waiter in waiters:
        if not waiter.called:
            waiter.callback(entry)


class Origins:
    """The states of the origins that need one, bounded like the rules database."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._states: dict[str, OriginState] = {}

    def __len__(self) -> int:
        return len(self._states)

    def get(self, origin: str) -> OriginState | None:
        return self._states.get(origin)

    def state(self, origin: str, trigger: Request) -> OriginState:
        """The state of ``origin``, made (with ``trigger`` as its latest request) if none."""
        state = self._states.get(origin)
        if state is None:
            state = self._states[origin] = OriginState(origin, trigger)
        return state

    def fetching(self) -> bool:
        """Whether any robots.txt fetch is under way."""
        return any(s.fetching for s in self._states.values())

    def unreachable(self) -> int:
        """How many origins' robots.txt is unreachable now (in an outage)."""
        return sum(1 for state in self._states.values() if state.outage is not None)

    def forget_if_idle(self, state: OriginState) -> None:
        """Drop the state of an origin that needs none (unreachable ones keep their back-off)."""
        if state.idle and state.outage is None:
            self._states.pop(state.name, None)
        elif len(self._states) > self.capacity:
            # Bounded like the rules: idle unreachable origins lose their
            # back-off history first (fetched at once when next needed).
            for idle in [s for s in self._states.values() if s.idle]:
                del self._states[idle.name]

    def close(self) -> None:
        """Cancel every origin's timers (the spider is closed)."""
        for state in self._states.values():
            state.cancel_timers()
