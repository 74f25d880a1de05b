"""Fetch leases in a shared store: one crawler of a fleet fetches a file, the others take it.

SPEC 8's "one robots.txt per origin", fleet-wide: before fetching robots.txt
(or tdmrep.json) a crawler takes the file's lease in the shared store, or
waits, polling with doubling pauses, until the holder has stored what it
fetched. A lease is renewed while its fetch runs; one whose holder stopped
renewing it (a crashed crawler) expires after ``ROBOTRULES_LEASE`` seconds
and is taken over. With the store down, every crawler fetches on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.exceptions import FetchClosing

if TYPE_CHECKING:
    from scrapy_robotrules.engine.stores import CachedStore

__all__ = ["FLEET_POLL_FIRST", "FLEET_POLL_MAX", "Leases"]

T = TypeVar("T")

FLEET_POLL_FIRST = 0.05
FLEET_POLL_MAX = 1.0
"""Seconds between looks at the shared store while another crawler fetches: doubling."""


class _Renewal:
    """Keeps a fetch lease alive while the fetch runs: renewed every third of its length."""

    def __init__(self, fleet: CachedStore, key: str, owner: str, seconds: float) -> None:
        self.fleet, self.key, self.owner, self.seconds = fleet, key, owner, seconds
        self.call: compat.Timer | None = compat.call_later(seconds / 3, self.renew)

    def renew(self) -> None:
        self.fleet.lease(self.key, self.owner, self.seconds)
        self.call = compat.call_later(self.seconds / 3, self.renew)

    def stop(self) -> None:
        if self.call is not None:
            self.call.cancel()
            self.call = None


class Leases:
    """This crawler's fetch leases in the shared store ``fleet``, held as ``owner``."""

    def __init__(
        self, fleet: CachedStore, owner: str, seconds: float, closing: Callable[[], bool]
    ) -> None:
        self.fleet = fleet
        self.owner = owner
        self.seconds = seconds
        self._closing = closing

    async def take_or_wait(self, key: str, stored: Callable[[], T | None]) -> T | None:
        """``None`` once this crawler holds the lease of ``key`` (or no store answers): fetch.

        Else what ``stored()`` found, fresh in the store: the holder's fetch
        (or one that just ended). Raises :class:`.FetchClosing` if the crawl
        closes while it waits.
        """
        fleet, owner = self.fleet, self.owner
        pause = FLEET_POLL_FIRST
        while True:
            taken = fleet.lease(key, owner, self.seconds)
            # Taken (or no store to ask): what if the holder just finished?
            found = stored() if taken is not None else None
            if taken is not False:
                if found is not None and taken:
                    fleet.release(key, owner)
                return found
            if found is not None:
                return found
            if self._closing():
                raise FetchClosing
            await compat.sleep(pause)
            pause = min(pause * 2, FLEET_POLL_MAX)

    @contextmanager
    def held(self, key: str) -> Iterator[None]:
        """Renew the lease of ``key`` while the fetch runs; release it after."""
        renewal = _Renewal(self.fleet, key, self.owner, self.seconds)
        try:
            yield
        finally:
            renewal.stop()
            self.fleet.release(key, self.owner)
