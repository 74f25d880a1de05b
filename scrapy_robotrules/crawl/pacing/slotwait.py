"""Whether a request leaves its download slot's queue while its rules are still fresh (SPEC 8).

The downloader middleware, a request's final gate, runs before Scrapy's
download slot queues it. A slot with a delay (Crawl-delay, ``DOWNLOAD_DELAY``,
AutoThrottle) lets one request go per delay, so a request allowed under
fresh rules may reach the site after they went past their age (RFC 9309 2.4
lets a crawler use a file for at most that long). The middleware asks
:meth:`SlotWait.sends_back`: such a request waits, parked, for the next file,
whose fetch starts then.

Only rules with less left than the longest wait a slot's queue could hold
(:attr:`SlotWait.horizon`) have a request's slot looked at: for most
requests, the check is one comparison.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.requestmeta import SENT_BACK, origin_for

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

__all__ = ["OWN_FETCHES", "Refetches", "SlotWait"]


class OriginStates(Protocol):
    def state(self, origin: str, trigger: Request) -> Any: ...


class Refetches(Protocol):
    """The robots.txt fetches (``fetching.fetches.Fetches``), given: pacing sits below them."""

    @property
    def origins(self) -> OriginStates: ...

    def start(
        self, state: Any, request: Request, *, refresh: bool = ..., robots: bool = ...
    ) -> None: ...


OWN_FETCHES = 4
"""Requests of this package's own a slot may queue besides the pages: robots.txt and
tdmrep.json, of the http and the https origin of its host."""


def _settings_gap(settings: BaseSettings) -> float:
    """The longest gap the settings let a slot keep: ``DOWNLOAD_DELAY``, AutoThrottle's
    maximum, ``DOWNLOAD_SLOTS`` delays, each varied by the largest jitter given."""
    delays = [settings.getfloat("DOWNLOAD_DELAY")]
    if settings.getbool("AUTOTHROTTLE_ENABLED"):
        delays.append(settings.getfloat("AUTOTHROTTLE_MAX_DELAY"))
    jitters = [compat.default_jitter(settings), 0.0]
    for slot in settings.getdict("DOWNLOAD_SLOTS").values():
        if not isinstance(slot, dict):
            continue
        try:
            delays.append(float(slot.get("delay", 0.0)))
            jitters.append(float(slot.get("jitter", 0.5 if slot.get("randomize_delay") else 0.0)))
        except (TypeError, ValueError):
            continue  # Scrapy's own reading of the setting says what is wrong with it
    return max(0.0, *delays) * (1.0 + max(jitters))


class SlotWait:
    """How long requests wait in their download slots' queues, against their rules' age."""

    def __init__(self, crawler: Crawler, fetches: Refetches) -> None:
        self.crawler = crawler
        self.fetches = fetches
        settings = crawler.settings
        places = settings.getint("CONCURRENT_REQUESTS")
        self.places = places + OWN_FETCHES if places > 0 else float("inf")
        """How many requests a slot's queue may hold: all the downloader takes (0: no limit)."""
        self.gap = _settings_gap(settings)
        """The longest gap a slot keeps between two requests, as far as this crawler knows."""
        self.horizon = (self.places + 1) * self.gap if self.gap > 0.0 else 0.0
        """Seconds: rules fresh longer outlast any slot's queue (a gap owed, then one per place)."""

    def widen(self, gap: float) -> None:
        """A slot keeps ``gap`` between requests now (a Crawl-delay floor raised it)."""
        if gap > self.gap:
            self.gap = gap
            self.horizon = (self.places + 1) * gap

    def sends_back(self, request: Request, left: float) -> bool:
        """Whether ``request``, allowed under rules fresh for ``left`` more seconds, is to wait
        for their next file, its fetch started: it would leave its slot's queue after that.

        Once per request (:data:`.SENT_BACK`): decided under the next file, it goes on.
        Asked only for ``left`` under :attr:`horizon` (the caller compares).
        """
        meta = request.meta
        url = request.url
        if meta.get(SENT_BACK) == url or not self.outlasts(request, left):
            return False
        meta[SENT_BACK] = url
        fetches = self.fetches
        fetches.start(fetches.origins.state(origin_for(request), request), request, refresh=True)
        return True

    def outlasts(self, request: Request, left: float) -> bool:
        """Whether ``request``, given to its slot now, would leave its queue ``left`` seconds on
        or later: its rules, fresh for ``left`` more seconds, would be past their age by then.

        Asked only for ``left`` under :attr:`horizon` (the caller compares).
        """
        slot = compat.download_slot(self.crawler, request)
        return slot is not None and compat.slot_wait(slot) >= left
