"""When each download slot let a request go, and the delay it held then.

Pacing is read from Scrapy's own decision, not from when requests reached
the server: a loaded machine delays one arrival and so shrinks the next gap.
Scrapy's downloader lets a slot's next request go only once ``monotonic()``
is at least ``slot.lastseen`` plus a delay drawn from ``slot.delay`` and
``slot.jitter`` at that moment; then it sets ``slot.lastseen`` to that
moment and takes the request off ``slot.queue``. So two releases are at
least the drawn delay apart on Scrapy's own clock, by construction, and a
slow machine can only widen the gap; a delay the crawl failed to put on the
slot shows as releases closer than asked.

``SLOT_LOG`` turns on :class:`SlotLog`, which gives each slot, as its first
request reaches it, a queue that notes ``lastseen``, ``delay`` and
``jitter`` as each request is taken off it. The queue and those attributes
are Scrapy's undocumented slot internals, the same on every supported
version; only tests read them this way.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from scrapy import Request, signals

from scrapy_robotrules.crawl import compat

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler

__all__ = ["SLOT_LOG", "Release", "SlotLog", "assert_released_apart", "pages_released"]

SLOT_LOG: dict[str, Any] = {"EXTENSIONS": {"tests.helpers.slots.SlotLog": 0}}
"""Settings that turn the log on (merge them last: they set EXTENSIONS)."""

EPSILON = 1e-9
"""Rounding between Scrapy's ``delay - now + lastseen`` and this ``later - earlier``."""


class Release(NamedTuple):
    """A request let go by its download slot: ``at`` is the slot's ``lastseen`` then."""

    url: str
    at: float
    delay: float
    jitter: float

    @property
    def shortest_gap(self) -> float:
        """The least delay the slot could draw: its gap before this release was at least this."""
        return self.delay * (1.0 - self.jitter)


_LOGS: WeakKeyDictionary[Crawler, list[Release]] = WeakKeyDictionary()


class _NotingQueue(deque[tuple[Request, Any]]):
    """A slot's queue that notes the slot's state as each request is taken off it."""

    def __init__(self, slot: Slot, log: list[Release], items: Iterable[tuple[Request, Any]]):
        super().__init__(items)
        self.slot = slot
        self.log = log

    def popleft(self) -> tuple[Request, Any]:
        item = super().popleft()
        slot = self.slot
        # Scrapy set lastseen to this release's moment just before taking it.
        self.log.append(Release(item[0].url, slot.lastseen, slot.delay, compat.slot_jitter(slot)))
        return item


class SlotLog:
    """An extension: every slot's releases, in order, for :func:`pages_released`."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.releases: list[Release] = []
        _LOGS[crawler] = self.releases
        crawler.signals.connect(self.reached, signal=signals.request_reached_downloader)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SlotLog:
        return cls(crawler)

    def reached(self, request: Request, **kwargs: Any) -> None:
        # Sent once the slot exists and before the request joins its queue.
        slot = compat.download_slot(self.crawler, request)
        if slot is not None and not isinstance(slot.queue, _NotingQueue):
            slot.queue = _NotingQueue(slot, self.releases, slot.queue)


def pages_released(crawler: Crawler, host: str) -> list[Release]:
    """The releases of ``host``'s requests other than robots.txt, in order."""
    releases = _LOGS.get(crawler)
    assert releases is not None, "the crawl ran without SLOT_LOG"
    return [
        r
        for r in releases
        if urlsplit(r.url).hostname == host and urlsplit(r.url).path != "/robots.txt"
    ]


def gaps(releases: Sequence[Release]) -> list[float]:
    """Seconds between consecutive releases, on Scrapy's clock."""
    return [later.at - earlier.at for earlier, later in itertools.pairwise(releases)]


def assert_released_apart(releases: Sequence[Release], delay: float) -> None:
    """Assert that the slot let each request go ``delay`` after the one before, and held it.

    Both the gaps, on Scrapy's clock, and the delay the slot held at each
    release (the least it could draw) must keep ``delay``.
    """
    assert len(releases) >= 2, releases
    for earlier, later in itertools.pairwise(releases):
        assert later.at - earlier.at >= delay - EPSILON, (earlier, later, delay)
        assert later.shortest_gap >= delay - EPSILON, (later, delay)
