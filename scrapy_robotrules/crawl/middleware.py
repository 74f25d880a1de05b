"""The downloader middleware: every request asks its origin's robots.txt first.

It takes the place of Scrapy's ``RobotsTxtMiddleware`` (priority 100).
``ROBOTSTXT_OBEY`` turns it on; ``meta={"dont_obey_robotstxt": True}``
lets one request through unchecked; ``data:`` and ``file:`` URLs are never
checked. A request robots.txt does not allow is dropped with
``IgnoreRequest``, whose message says why: the deciding rule and its line,
or that robots.txt stayed unreachable. A request dropped earlier but let
through for its errback (in the scheduler, or for a page's ``nofollow``) is
raised here at once, never downloaded. Enabled by hand with Scrapy's own
middleware left on, it refuses that one's robots.txt requests (one WARNING
names the setting that switches it off): robots.txt is fetched once, and
decided here alone.

SPEC 7 (a drop says why) and 8 (the final gate of every request).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, ClassVar

from scrapy import Request
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http.request import NO_CALLBACK

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.deciding.verdicts import SHADOWED
from scrapy_robotrules.crawl.exceptions import (
    LET_THROUGH,
    DropReason,
    RobotsTxtNotFetched,
    RobotsTxtUnreachable,
)
from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.crawl.reporting.reporter import ROBOTS_REQUEST
from scrapy_robotrules.crawl.requestmeta import AGAIN, DECIDED, carried_in
from scrapy_robotrules.crawl.sitemaps import Sitemaps

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from scrapy_robotrules.engine.robots.decision import Decision

__all__ = ["RobotRulesMiddleware"]

logger = logging.getLogger(__name__)

OURS = "scrapy_robotrules.RobotRulesMiddleware"
BUILTIN = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


def _builtins_robots_txt(request: Request) -> bool:
    """Whether ``request`` is the robots.txt request of Scrapy's own middleware."""
    meta = request.meta
    return (
        request.callback is NO_CALLBACK
        and request.priority == RobotsTxtMiddleware.DOWNLOAD_PRIORITY
        and not meta.get(ROBOTS_REQUEST)
        and bool(meta.get("dont_obey_robotstxt"))
        and request.url.endswith("/robots.txt")
    )


class RobotRulesMiddleware:
    """Decides each request by its origin's robots.txt, waiting for the file if need be."""

    raises_let_through: ClassVar[bool] = True
    """It raises why a request let through for its errback was dropped (see
    ``exceptions.LET_THROUGH``): the manager looks for that in ``DOWNLOADER_MIDDLEWARES``."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        parts = RobotsManager.for_component(crawler)
        self.decider = parts.decider
        self.verdicts = parts.verdicts
        self.politeness = parts.politeness
        self.reporter = parts.reporter
        self.slot_wait = parts.slot_wait
        self.carrier = parts.carrier
        self.sitemaps = Sitemaps(crawler, parts.policies, parts.fetches, parts.reporter)
        """Sitemaps from the same fetch (sitemaps.py): a SitemapSpider's robots.txt answered."""
        self.builtin_beside = (
            compat.component_priority(
                crawler.settings, "DOWNLOADER_MIDDLEWARES", RobotsTxtMiddleware
            )
            is not None
        )
        """Scrapy's own middleware is on too (this one enabled by hand, the built-in left on)."""
        if self.builtin_beside:
            self.reporter.builtin.beside = True
            logger.warning(
                "Scrapy's RobotsTxtMiddleware is enabled beside %(ours)s: its robots.txt"
                " requests are refused here (robots.txt is fetched once, by this package,"
                " which decides alone). Switch it off: DOWNLOADER_MIDDLEWARES ="
                ' {"%(builtin)s": None}',
                {"ours": OURS, "builtin": BUILTIN},
                extra={"spider": crawler.spider},
            )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Response | None:
        # ``spider``: Scrapy 2.13 passes it; 2.14+ passes it only to methods that require it.
        decider = self.decider
        meta = request.meta
        url = request.url
        decided = meta.get(DECIDED)
        if decided != url or meta.get("dont_obey_robotstxt") or url.endswith("/robots.txt"):
            # Not most requests (decided in the scheduler for this URL, so checked then).
            if isinstance(decided, LET_THROUGH):
                # Dropped (and counted) when it was scheduled or yielded, let through
                # for its errback: before any check, which a nofollow drop never had.
                raise decided
            if self.builtin_beside and _builtins_robots_txt(request):
                # Scrapy's middleware then has no parser for the origin: it allows
                # every request, and this one decides (see the WARNING above).
                raise IgnoreRequest(f"robots.txt fetched by {OURS} instead")
            if not decider.checks(request):
                self.politeness.watch_unchecked(request)
                return None
            if url.endswith("/robots.txt"):  # sitemaps.py: answered from the origin's fetch
                answer = await self.sitemaps.answer(request)
                if answer is not None:
                    return answer
        agent = None
        if decided == url:
            # Decided (and counted) when it was scheduled: under the rules at hand, or again.
            carried = carried_in(meta)
            if (
                carried is not None
                and carried.url == url
                and (left := self.carrier.fresh_for(carried, request)) > 0.0
            ):
                # Its decision's agent is the request's still (fresh_for): not chosen again.
                agent = carried.agent
                # Still fresh; but near their age, the wait in its slot's queue may outlast them.
                if left < self.slot_wait.horizon and self.slot_wait.sends_back(request, left):
                    return self._decide_again_later(request)
            elif meta.get(SHADOWED) != url:
                # pinning.py: held by its pin, it waits parked, not here
                if decider.refresh_due(request) or decider.held_by_pin(request):
                    return self._decide_again_later(request)
                if not await self._recheck(request):
                    return None
        else:
            await self._decide(request)
        if (turn := self.politeness.pace(request, agent)) is not None:
            await turn
        return None

    async def _decide(self, request: Request) -> None:
        """Decide a request never decided in the scheduler; raise why it is dropped, if it is.

        ``engine.download_async`` callers' requests, which never meet the scheduler.
        """
        verdicts = self.verdicts
        verdicts.offered(request.meta, request.url)
        verdict: Decision | DropReason
        try:
            verdict = await self.decider.decide(request)
        except (RobotsTxtUnreachable, RobotsTxtNotFetched) as exc:
            verdict = exc
        dropped = verdicts.decided(request, verdict, scheduling=False)
        if dropped is not None:
            raise dropped

    def _decide_again_later(self, request: Request) -> Request:
        """A request allowed under rules now past their age (or gone), or that would be by the
        time it left its download slot's queue: to be decided again.

        It leaves the downloader, holding no ``CONCURRENT_REQUESTS`` place, and
        is offered to the engine again (so a duplicate of itself, let through);
        the scheduler parks it until its origin's next robots.txt (whose fetch has
        started) and decides it under that file. Its allowed count is taken
        back meanwhile, to be counted again as it is decided again.
        """
        self.reporter.count("allowed", -1)
        meta = request.meta
        meta[DECIDED] = None
        meta[AGAIN] = request.url
        return request.replace(dont_filter=True)

    async def _recheck(self, request: Request) -> bool:
        """The final gate for a request allowed when it was scheduled, under other rules.

        Its origin's rules changed since (a refresh, another agent, another
        tdmrep.json), and are fresh: decided again, and counted only if the
        newer robots.txt now forbids it (moved from allowed to forbidden, so
        the counts still add up).
        Whether it is then paced: not when no decision could be had.
        """
        try:
            decision = await self.decider.decide(request)
        except IgnoreRequest:
            return False  # allowed by the rules it was scheduled under
        dropped = self.verdicts.decided(request, decision, scheduling=False, again=True)
        if dropped is not None:
            raise dropped
        return True
