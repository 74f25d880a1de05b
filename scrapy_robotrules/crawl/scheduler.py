"""The scheduler: every request to be scheduled is decided, parked or dropped before it is queued.

:class:`RobotRulesScheduler` is a Scrapy scheduler (``SCHEDULER``,
``BaseScheduler``) that wraps the one the project configured
(``ROBOTRULES_SCHEDULER``: Scrapy's own by default, scrapy-redis's or any
other), as scrapy-zyte-api's add-on keeps the configured request
fingerprinter and wraps it. The add-on puts it in place; see the Scrapy guide
for a project that sets up the components by hand.

Every request that is to be scheduled reaches :meth:`enqueue_request`: a
spider's start requests and callbacks' requests, redirects and retries,
requests of other components (Scrapy's shell, sitemaps, scrapy-redis):

- a request whose origin has rules is handed to the inner scheduler, or
  dropped right there;
- one whose origin has none yet is *parked* while its robots.txt is
  fetched (:mod:`.holding.parking`), outside the inner scheduler and the
  downloader, so it holds no ``CONCURRENT_REQUESTS`` place and a slow
  robots.txt delays its own site only. :meth:`has_pending_requests` keeps
  the spider open meanwhile. Once the fetch ends, the parked request is
  offered to the engine again (``engine.crawl``: the only public way to
  wake the engine for a request that was not queued when it last asked)
  and decided here under the rules now at hand;
- when the crawl closes, :meth:`close` hands the parked requests to the
  inner scheduler to be saved with its queue (``JOBDIR``, scrapy-redis's
  ``SCHEDULER_PERSIST``), or counts them lost.

Most offers are duplicates (a page links its site's pages again): one of a
URL allowed for the crawler's own agent, under the robots.txt entry still
held, goes on to the inner scheduler (which drops a duplicate) without its
headers built or its decision made again.

A request dropped here without an errback is told of (``request_dropped``)
on the loop's next turn: one that has an errback by then is queued, and the
downloader middleware raises why, so the errback hears it. Scrapy's shell
gives its ``fetch()`` request the errback it waits on only once
``engine.crawl()`` has returned.

SPEC 8 (requests parked while robots.txt is fetched; decided once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.misc import build_from_crawler, load_object

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.config.table import value
from scrapy_robotrules.crawl.exceptions import DropReason, RobotsTxtUnreachable
from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.crawl.requestmeta import AGAIN, DECIDED, PARKED

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

    # typing.Self requires Python 3.11
    from typing_extensions import Self

    from scrapy_robotrules.engine.robots.decision import Decision

__all__ = ["DEFAULT_INNER", "RobotRulesScheduler", "is_robots_scheduler"]

DEFAULT_INNER = "scrapy.core.scheduler.Scheduler"
"""The scheduler wrapped when ``ROBOTRULES_SCHEDULER`` names none: Scrapy's own."""


class RobotRulesScheduler(BaseScheduler):
    """Decides each request before the configured scheduler queues it, or parks it."""

    def __init__(self, crawler: Crawler, inner: BaseScheduler) -> None:
        self.crawler = crawler
        self.inner = inner
        """The configured scheduler (``ROBOTRULES_SCHEDULER``): it queues what is let in."""
        self._dropped: list[tuple[Request, DropReason]] = []
        """Requests kept out of the queue, not yet told of (see :meth:`settle`)."""
        self.obeys = crawler.settings.getbool("ROBOTSTXT_OBEY")
        """Whether the crawl obeys robots.txt; if not, every request goes in as it is."""
        if self.obeys:
            parts = RobotsManager.for_crawler(crawler)
            self.decider = parts.decider
            self.verdicts = parts.verdicts
            self.parking = parts.parking
            self.reporter = parts.reporter

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        with compat.failing_start(crawler):
            path = value(crawler.settings, "ROBOTRULES_SCHEDULER") or DEFAULT_INNER
        inner_cls = load_object(path)
        if is_robots_scheduler(inner_cls):
            inner_cls = load_object(DEFAULT_INNER)  # itself named: wrap Scrapy's, once
        return cls(crawler, build_from_crawler(inner_cls, crawler))

    # What the engine asks of a scheduler, passed on to the inner one.

    def open(self, spider: Spider) -> Deferred[None] | None:
        return self.inner.open(spider)

    def close(self, reason: str) -> Deferred[None] | None:
        """Hand the parked requests to the inner scheduler, then close it.

        It saves them with its queue (``JOBDIR``, ``SCHEDULER_PERSIST``);
        without either they are counted lost instead (:meth:`.Parking.take_parked`).
        """
        if self.obeys:
            for request in self.parking.take_parked():
                self.inner.enqueue_request(request)
            self.settle(closing=True)
        return self.inner.close(reason)

    def has_pending_requests(self) -> bool:
        """Queued requests, parked ones, robots.txt fetches under way or drops not told yet."""
        if self.inner.has_pending_requests():
            return True
        return self.obeys and (self.parking.pending() or bool(self._dropped))

    def next_request(self) -> Request | None:
        return self.inner.next_request()

    def __len__(self) -> int:
        """The inner scheduler's queued requests (if it counts them) and the parked ones."""
        queued = len(self.inner) if hasattr(self.inner, "__len__") else 0
        return queued + (len(self.parking) if self.obeys else 0)

    # Deciding.

    def enqueue_request(self, request: Request) -> bool:
        """Queue ``request`` if its origin's rules allow it; else park it, or drop it.

        ``True`` for a request parked, or dropped and told of later (:meth:`settle`).
        """
        if not self.obeys or self.decider.allowed_again(request):
            return self.inner.enqueue_request(request)
        admitted = self._admit(request)
        if admitted is None:
            return True  # parked, or dropped and told of on the loop's next turn
        return admitted and self.inner.enqueue_request(request)

    def _admit(self, request: Request) -> bool | None:
        """Whether ``request`` goes on to the inner scheduler; ``None`` if kept here.

        Counted once per URL a request lineage reaches: a parked request
        offered again, or a retry of a URL already decided, is not counted
        again; a redirect to another URL is a new offer, decided for its own
        origin and path.
        """
        decider = self.decider
        meta = request.meta
        url = request.url
        again = False
        if self.verdicts.offered(meta, url):
            if not decider.checks(request):
                self.reporter.count("unchecked")
                return True
        else:
            decided = meta.get(DECIDED)
            # Decided (or unchecked) for this URL already, or dropped and let
            # through for its errback. Not a decision on the URL a redirect
            # came from: the redirect parked for its own origin's rules is
            # decided (or parked again) as it is offered again.
            if decided == url or isinstance(decided, Exception) or not decider.checks(request):
                return True
            # Back from the downloader, its rules past their age: decided under the next file.
            again = meta.pop(AGAIN, None) == url
        verdict: Decision | RobotsTxtUnreachable | None
        try:
            verdict = decider.decide_fresh_now(request) if again else decider.decide_now(request)
        except RobotsTxtUnreachable as exc:
            verdict = exc
        if verdict is None:
            if self.parking.park(request):
                if meta.get(PARKED) != url:
                    meta[PARKED] = url
                    self.reporter.count("parked")
                return None
            try:
                self.parking.hand_over(request)  # the crawl is closing
            except IgnoreRequest:
                return None
            return True
        dropped = self.verdicts.decided(request, verdict, scheduling=True)
        return True if dropped is None else self._drop(request, dropped)

    def _drop(self, request: Request, exc: DropReason) -> bool | None:
        """Whether ``request``, dropped (counted and logged), is queued for its errback."""
        if request.errback is not None:
            # The spider wants to know: the middleware raises the same
            # exception Scrapy's own middleware would have, at once.
            request.meta[DECIDED] = exc
            return True
        # Whoever called engine.crawl() may give it an errback before
        # returning to the loop: settled on the loop's next turn.
        if not self._dropped:
            compat.call_later(0, self.settle)
        self._dropped.append((request, exc))
        return None

    def settle(self, *, closing: bool = False) -> None:
        """Tell of the requests kept out of the queue since the loop's last turn.

        One given an errback meanwhile is offered to the engine again, as if
        it had had it all along: queued, and the middleware raises why
        (counted already). Offered, not queued here: the engine asks for the
        next request only when woken, and ``engine.crawl`` is what wakes it.
        The others are dropped (``request_dropped``), as are all once the crawl closes.
        """
        dropped, self._dropped = self._dropped, []
        engine = None if closing else compat.engine(self.crawler)
        for request, exc in dropped:
            if engine is not None and engine.spider is not None and request.errback is not None:
                request.meta[DECIDED] = exc
                engine.crawl(request)
                continue
            self.crawler.signals.send_catch_log(
                signal=signals.request_dropped, request=request, spider=self.crawler.spider
            )


def is_robots_scheduler(scheduler: object) -> bool:
    """Whether ``scheduler`` (a class) is :class:`RobotRulesScheduler` or derives from it.

    Not ``issubclass``: ``BaseScheduler``'s metaclass takes any class with the
    scheduler's methods for a subclass of every scheduler class.
    """
    return isinstance(scheduler, type) and RobotRulesScheduler in scheduler.__mro__
