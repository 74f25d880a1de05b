"""The scheduler's door: every request given to the engine is decided, parked or dropped there.

Every request that is to be scheduled passes ``engine.crawl``: a spider's
start requests and callbacks' requests, redirects and retries, requests of
other components (Scrapy's shell, sitemaps, scrapy-redis), parked requests
offered again. :func:`.compat.guard_crawl` puts :meth:`Gate.guarded` in its
place, before Scrapy's ``request_scheduled`` signal and the scheduler:

- a request whose origin has rules is let into the scheduler or dropped
  right there;
- one whose origin has none yet is *parked* outside the scheduler and the
  downloader while its robots.txt is fetched, then offered again. Parked
  requests hold no ``CONCURRENT_REQUESTS`` place, so a slow robots.txt
  delays its own site only.

Why not a ``request_scheduled`` handler, as Scrapy's docs would suggest:
Scrapy sends that signal once per offer, duplicates included, and a
receiver costs about 20,000 CPU instructions per offer in the dispatch
alone (pydispatcher's ``robustApply``), more than this whole layer's
deciding; a page that links ten pages of its site is ten offers.

Most offers are duplicates (a page links its site's pages again): one of a
URL allowed for the crawler's own agent, under the robots.txt entry still
held, is let through in :meth:`Gate.guarded` itself, without building the
request's headers or deciding it again (about 9,900 CPU instructions an
offer, against 21,900 through the whole decision path).

A request dropped here without an errback is told of (``request_dropped``)
on the loop's next turn: one that has an errback by then goes on to the
downloader middleware, which raises why, so the errback hears it. Scrapy's
shell gives its ``fetch()`` request the errback it waits on only once
``engine.crawl()`` has returned.

SPEC 8 (requests parked while robots.txt is fetched; decided once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.exceptions import DropReason, RobotsTxtUnreachable
from scrapy_robotrules.crawl.requestmeta import AGAIN, DECIDED, OFFERED, PARKED, carry, same_rules
from scrapy_robotrules.engine.stores.memory import WeightedLRU

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotrules.crawl.manager import RobotsManager
    from scrapy_robotrules.engine.robots.decision import Decision

__all__ = ["Gate"]

_AGENT = b"User-Agent"


class Gate:
    """Decides each request before the scheduler, or parks it; keeps the dropped ones out."""

    def __init__(self, crawler: Crawler, manager: RobotsManager) -> None:
        self.crawler = crawler
        self.manager = manager
        self._dropped: list[tuple[Request, DropReason]] = []
        """Requests kept out of the scheduler, not yet told of (see :meth:`settle`)."""
        self._crawl: Callable[..., None] = _not_guarding
        """The engine's own ``crawl``, once :meth:`guard` took its place."""
        self._answers = manager.answers.by_url
        store = manager.db.store
        # A duplicate is no use of its origin's rules (the scheduler drops
        # it): the in-memory store is asked without moving the origin up.
        self._held = store.peek if isinstance(store, WeightedLRU) else store.get
        self._request_agents = manager.politeness.request_agents
        self._reporter = manager.reporter

    def guard(self, crawl: Callable[..., None]) -> Callable[..., None]:
        """Take the place of the engine's ``crawl`` (see :func:`.compat.guard_crawl`)."""
        self._crawl = crawl
        return self.guarded

    def guarded(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """The engine's ``crawl``, for each request :meth:`admit` (or a duplicate's answer) lets in.

        A duplicate of a URL allowed for the crawler's own agent, under the
        robots.txt entry still held (not whether it is still fresh: the
        scheduler drops a duplicate, and the downloader middleware asks again
        for one it keeps), is counted offered and allowed, and goes on.
        """
        url = request.url
        answer = self._answers.get(url)
        carried = None if answer is None else answer.carried
        if carried is not None:
            meta = request.meta
            if (meta.get(OFFERED) != url and not meta.get("dont_obey_robotstxt")) and (
                same_rules(self._held(carried.origin), carried.generation)
                # No User-Agent of its own to ask about instead of the crawler's.
                and not (self._request_agents and compat.request_header(request, _AGENT))
            ):
                meta[OFFERED] = meta[DECIDED] = url
                carry(meta, carried)
                reporter = self._reporter
                reporter.allowed_again += 1
                if reporter.flush_call is None:
                    reporter.schedule_flush()
                self._crawl(request, *args, **kwargs)
                return
        if self.admit(request):
            self._crawl(request, *args, **kwargs)

    def admit(self, request: Request) -> bool:
        """Whether ``request`` goes on to the scheduler; if not, it is parked or dropped.

        Counted once per URL a request lineage reaches: a parked request
        offered again, or a retry of a URL already decided, is not counted
        again; a redirect to another URL is a new offer, decided for its own
        origin and path.
        """
        manager = self.manager
        meta = request.meta
        url = request.url
        verdicts = manager.verdicts
        again = False
        if verdicts.offered(meta, url):
            if not manager.checks(request):
                manager.reporter.count("unchecked")
                return True
        else:
            decided = meta.get(DECIDED)
            # Decided (or unchecked) for this URL already, or dropped and let
            # through for its errback. Not a decision on the URL a redirect
            # came from: the redirect parked for its own origin's rules is
            # decided (or parked again) as it is offered again.
            if decided == url or isinstance(decided, Exception) or not manager.checks(request):
                return True
            # Back from the downloader, its rules past their age: decided under the next file.
            again = meta.pop(AGAIN, None) == url
        verdict: Decision | RobotsTxtUnreachable | None
        try:
            verdict = manager.decide_fresh_now(request) if again else manager.decide_now(request)
        except RobotsTxtUnreachable as exc:
            verdict = exc
        if verdict is None:
            if manager.park(request):
                if meta.get(PARKED) != url:
                    meta[PARKED] = url
                    manager.reporter.count("parked")
                return False
            try:
                manager.hand_over(request)  # the crawl is closing
            except IgnoreRequest:
                return False
            return True
        dropped = verdicts.decided(request, verdict, scheduling=True)
        return dropped is None or self._drop(request, dropped)

    def _drop(self, request: Request, exc: DropReason) -> bool:
        """Whether ``request``, dropped (counted and logged), still goes on for its errback."""
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
        return False

    def settle(self, *, closing: bool = False) -> None:
        """Tell of the requests kept out of the scheduler since the loop's last turn.

        One given an errback meanwhile goes back to the engine, as if it had
        had it all along: the middleware raises why (counted already). The
        others are dropped (``request_dropped``), as are all once the crawl closes.
        """
        dropped, self._dropped = self._dropped, []
        engine = compat.engine(self.crawler)
        if closing or engine is None or engine.spider is None:
            engine = None
        for request, exc in dropped:
            if engine is not None and request.errback is not None:
                request.meta[DECIDED] = exc
                engine.crawl(request)
                continue
            self.crawler.signals.send_catch_log(
                signal=signals.request_dropped, request=request, spider=self.crawler.spider
            )


def _not_guarding(request: Request, *args: Any, **kwargs: Any) -> None:
    raise RuntimeError("Gate.guarded called before Gate.guard")
