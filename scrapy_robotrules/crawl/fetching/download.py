"""Downloading robots.txt (and tdmrep.json) through Scrapy's engine, redirects followed here.

SPEC 8: up to 5 redirects, to any host, counted here (Scrapy's redirect
middleware is told to keep out). A robots.txt body is read as far as it is
parsed (SPEC 1, RFC 9309 §2.5), whatever size the server announces and
whatever ``DOWNLOAD_MAXSIZE`` says: its download stops there
(``bytes_received``, ``StopDownload(fail=False)``), keeping what arrived.
Fetches take no ``CONCURRENT_REQUESTS`` place from the pages, and at most
``ROBOTRULES_CONCURRENT_FETCHES`` start at once; a slow one gives its place
up after :data:`SLOW_FETCH` seconds. A download ends in a :class:`Fetched`
value: what it means for the origin is :mod:`.fetching.entries`' to say.
"""

from __future__ import annotations

import logging
import re
import time
import weakref
from collections import deque
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urljoin, urlsplit

from scrapy import Request
from scrapy import signals as scrapy_signals
from scrapy.exceptions import StopDownload
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import DeferredSemaphore
from w3lib.url import safe_url_string

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.exceptions import FetchClosing
from scrapy_robotrules.crawl.fetching.bodies import (
    ACCEPT_ENCODING,
    ROBOTS_META,
    UNPACKED_MAX_META,
    RobotsBodyMiddleware,
    read_limit,
)
from scrapy_robotrules.crawl.reporting.reporter import ROBOTS_REQUEST
from scrapy_robotrules.engine.robots.fetch_outcomes import MAX_REDIRECTS

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robotrules.crawl.config.settings import RobotRulesConfig
    from scrapy_robotrules.crawl.reporting.reporter import Reporter

__all__ = ["DOWNLOAD_SIZE_FACTOR", "ROBOTS_PRIORITY", "SLOW_FETCH", "Downloader", "Fetched"]

logger = logging.getLogger(__name__)

ROBOTS_PRIORITY = 1000
"""Priority of robots.txt requests, as Scrapy's own middleware gives them."""
DOWNLOAD_SIZE_FACTOR = 10
"""What Scrapy may unpack of a robots.txt body, in times ROBOTRULES_MAX_SIZE (never
above ``DOWNLOAD_MAXSIZE``): a coding this package leaves to it, or all of them
without RobotsBodyMiddleware, whose download is then refused beyond that size
(``download_maxsize``) and counts as unreachable."""
_READING = "_robotrules_reading"
"""Request meta key: the :class:`_Reading` of a robots.txt download."""
SLOW_FETCH = 5.0
"""Seconds after which a robots.txt fetch gives its place up to the next one.

Places bound how many fetches start at once; a slow or dead robots.txt
(which may run for ``DOWNLOAD_TIMEOUT`` times Scrapy's retries) must not
hold one so long that the other sites' robots.txt wait behind it."""


class Fetched(NamedTuple):
    """How a fetch ended: the final response, or the error that stopped it."""

    response: Response | None
    url: str
    error: BaseException | None


_PLAIN_ROBOTS_URL = re.compile(
    r"https?://[a-z0-9][a-z0-9.-]*(?::(?:[0-9]{1,4}|[1-5][0-9]{4}))?/robots\.txt\Z"
)
"""A robots.txt URL that Scrapy's URL escaping would leave as it is (checked with w3lib's)."""


class _Reading:
    """How much of a robots.txt body is still to read before its download stops.

    Counted per response: a retry (another request, the same meta) reads
    its own body from the start.
    """

    __slots__ = ("left", "limit", "request")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit
        self.request: weakref.ref[Request] | None = None


class _Place:
    """A fetch place, given back at the end of the fetch or after SLOW_FETCH seconds."""

    __slots__ = ("places", "started")

    def __init__(self, places: DeferredSemaphore) -> None:
        self.places: DeferredSemaphore | None = places
        self.started = time.monotonic()

    def give_up(self) -> None:
        if self.places is not None:
            self.places.release()
            self.places = None


def _own_allowance(crawler: Crawler) -> AbstractContextManager[None]:
    """A robots.txt fetch takes no ``CONCURRENT_REQUESTS`` place from the pages.

    ``engine.download_async`` sends it at once, but counts it among the
    downloader's active requests, which the scheduler must wait for: a few
    slow or dead robots.txt files would then hold the crawl's places for up
    to ``DOWNLOAD_TIMEOUT`` (times Scrapy's retries), while the requests that
    wait for them are parked and hold none. So the downloader's limit is
    raised by one for each fetch under way; ``ROBOTRULES_CONCURRENT_FETCHES``
    bounds how many are.
    """
    return compat.extra_download_place(compat.downloader(crawler))


class Downloader:
    """One crawler's robots.txt downloads: places, requests, redirects, download stats."""

    def __init__(self, crawler: Crawler, config: RobotRulesConfig, reporter: Reporter) -> None:
        self.crawler = crawler
        self.reporter = reporter
        self._places = DeferredSemaphore(config.concurrent_fetches)
        """robots.txt downloads under way at once; more wait here, outside the downloader."""
        self._held: deque[_Place] = deque()
        """Places taken in the last SLOW_FETCH seconds or so, oldest first (see :meth:`_place`)."""
        self._slow_call: compat.Timer | None = None
        limit = DOWNLOAD_SIZE_FACTOR * config.max_size
        scrapy_limit = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self.maxsize = min(limit, scrapy_limit) if scrapy_limit > 0 else limit
        """Bytes Scrapy may unpack of a robots.txt body (see :data:`DOWNLOAD_SIZE_FACTOR`)."""
        self.read_limit: int | None = None
        """Bytes of a robots.txt body read before its download stops; ``None``:
        without RobotsBodyMiddleware, Scrapy unpacks whole bodies, within ``maxsize``."""
        own_bodies = compat.component_priority(
            crawler.settings, "DOWNLOADER_MIDDLEWARES", RobotsBodyMiddleware
        )
        if own_bodies is not None:
            self.read_limit = read_limit(config.max_size)
            crawler.signals.connect(self._bytes_received, signal=scrapy_signals.bytes_received)

    def _bytes_received(self, data: bytes, request: Request) -> None:
        """Stop a robots.txt download once :attr:`read_limit` bytes of its body arrived.

        Sent for each chunk of every download: a page's ends at one look-up.
        """
        reading: _Reading | None = request.meta.get(_READING)
        if reading is None:
            return
        if reading.request is None or reading.request() is not request:
            reading.request = weakref.ref(request)
            reading.left = reading.limit
        reading.left -= len(data)
        if reading.left <= 0:
            raise StopDownload(fail=False)

    async def _place(self) -> _Place:
        """One of the ROBOTRULES_CONCURRENT_FETCHES places, held until done or slow.

        A slow fetch need only give its place up when another waits for
        one: one timer then, for the oldest place, not one per fetch (a
        timer is costly to set and to cancel, and there would be one for
        every origin).
        """
        places = self._places
        self._give_up_slow()
        acquired = places.acquire()
        self._time_slow()
        await maybe_deferred_to_future(acquired)
        place = _Place(places)
        self._held.append(place)
        self._time_slow()
        return place

    def _give_up_slow(self) -> None:
        """Places held SLOW_FETCH seconds give up; those given back are forgotten."""
        held = self._held
        since = time.monotonic() - SLOW_FETCH
        while held and (held[0].places is None or held[0].started <= since):
            held.popleft().give_up()

    def _time_slow(self) -> None:
        """While a fetch waits for a place, time the oldest place held."""
        held = self._held
        if self._slow_call is None and held and self._places.waiting:
            wait = max(0.0, held[0].started + SLOW_FETCH - time.monotonic())
            self._slow_call = compat.call_later(wait, self._slow)

    def _slow(self) -> None:
        self._slow_call = None
        self._give_up_slow()
        self._time_slow()

    def _given_back(self, place: _Place) -> None:
        """``place``'s fetch ended: no more timer once none waits for a place."""
        place.give_up()
        if self._slow_call is not None and not self._places.waiting:
            self._slow_call.cancel()
            self._slow_call = None

    def request(self, url: str, trigger: Request, maxsize: int | None = None) -> Request:
        """The request for ``url``, on behalf of ``trigger`` (its proxy and slot)."""
        meta: dict[str, Any] = {
            "dont_obey_robotstxt": True,
            ROBOTS_REQUEST: True,
            # Redirects are followed here, to count them (SPEC 8: at most 5).
            "dont_redirect": True,
            # Wherever robots.txt redirects to, it is no offsite request.
            "allow_offsite": True,
            ROBOTS_META: True,
        }
        if maxsize is not None:
            meta["download_maxsize"] = maxsize  # tdmrep.json: refused beyond
        elif self.read_limit is None:
            # Without RobotsBodyMiddleware, Scrapy unpacks the whole body:
            # one sent far larger than read is refused, and counts as unreachable.
            meta["download_maxsize"] = self.maxsize
        else:
            # Only the first ROBOTRULES_MAX_SIZE bytes are read, whatever the
            # size announced: no size refused, the download stops there
            # (_bytes_received), and a compressed body is unpacked only as far
            # as it is read (bodies); one Scrapy unpacks gets its bound back.
            meta["download_maxsize"] = 0
            meta["download_warnsize"] = 0
            meta[UNPACKED_MAX_META] = self.maxsize
            meta[_READING] = _Reading(self.read_limit)
        if _PLAIN_ROBOTS_URL.match(url):
            # Already as Scrapy would escape it: not escaped again (w3lib's
            # safe_url_string is most of the CPU a Request costs to make).
            meta["verbatim_url"] = True
        for key in ("proxy", "download_slot"):
            if key in trigger.meta:
                meta[key] = trigger.meta[key]
        return Request(
            url,
            priority=ROBOTS_PRIORITY,
            meta=meta,
            headers={"Accept-Encoding": ACCEPT_ENCODING},
            callback=NO_CALLBACK,
        )

    async def download(
        self, first_url: str, trigger: Request, *, prefix: str = "", maxsize: int | None = None
    ) -> Fetched:
        """Fetch ``first_url`` through the engine, following up to 5 redirects.

        Also tdmrep.json's fetch: its stats under ``prefix``, its own ``maxsize``.
        Raises :class:`.FetchClosing` when the crawl closes before a hop starts.
        """
        url = first_url
        file = first_url.rpartition("/")[2]  # robots.txt or tdmrep.json
        inc = self.reporter.inc
        for hop in range(MAX_REDIRECTS + 1):
            place = await self._place()
            if compat.crawl_closing(self.crawler):
                self._given_back(place)
                raise FetchClosing
            inc(f"{prefix}request_count")
            try:
                try:
                    with _own_allowance(self.crawler):
                        response = await compat.download(
                            self.crawler, self.request(url, trigger, maxsize)
                        )
                finally:
                    self._given_back(place)
            except Exception as exc:
                inc(f"{prefix}exception_count/{type(exc).__name__}")
                if not prefix:
                    self.reporter.builtin.fetched(None, exc)
                return Fetched(None, url, exc)
            inc(f"{prefix}response_status_count/{response.status}")
            location = response.headers.get(b"Location")
            target = None
            if 300 <= response.status < 400 and location and hop < MAX_REDIRECTS:
                target = urljoin(url, safe_url_string(location))
            if target is None or urlsplit(target).scheme not in ("http", "https"):
                # The download ends here (more than 5 redirects leaves a 3xx:
                # no robots.txt, SPEC 8), as Scrapy's own middleware counts one.
                if not prefix:
                    self.reporter.builtin.fetched(response, None)
                if target is not None:
                    # Not followed: the 3xx stays final, which means no robots.txt.
                    logger.debug(
                        "%(file)s redirect (%(status)d) to a non-HTTP URL %(target)s from %(url)s:"
                        " not followed",
                        {"file": file, "status": response.status, "target": target, "url": url},
                        extra=self.reporter.spider,
                    )
                return Fetched(response, url, None)
            logger.debug(
                "%(file)s redirect (%(status)d) to %(target)s from %(url)s",
                {"file": file, "status": response.status, "target": target, "url": url},
                extra=self.reporter.spider,
            )
            url = target
        raise AssertionError("unreachable: the last hop always returns")  # pragma: no cover
