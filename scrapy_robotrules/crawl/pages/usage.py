"""The spider middleware for usage preferences: the view on every response, items judged by it.

Every response that reaches a callback carries, in
``response.meta["robotrules_usage"]``, a
:class:`~scrapy_robotrules.engine.usage.preferences.UsageView`: the preferences for its URL
from its origin's robots.txt (``Content-Usage``, ``Content-Signal``), its
own headers (``Content-Usage``, ``Content-Signal`` or ``Content-Signals``,
``tdm-reservation``, ``tdm-policy``) and, for HTML, its ``tdm-reservation`` /
``tdm-policy`` meta tags, with the origin's robots.txt ``License`` lines
(RSL 1.0: shown, and named in an item's mark, never enforced). When it
refuses a purpose of ``ROBOTRULES_PURPOSES`` the items the callback yields
are marked (default), dropped or left alone (``ROBOTRULES_USAGE_ITEMS``), as
noindex items are. (What robots.txt refuses
never gets here: the request was dropped before download.)

SPEC: none (usage preferences go beyond robots.txt; the usage preferences guide in docs/
describes them).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.http import Headers

from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.crawl.pages.head import response_metas, says_nothing
from scrapy_robotrules.crawl.pages.page_middleware import PageMiddleware, callback_meta
from scrapy_robotrules.crawl.requestmeta import origin_for
from scrapy_robotrules.engine.robots.signal_lines import name_licenses
from scrapy_robotrules.engine.robots.urls import origin_of
from scrapy_robotrules.engine.usage.preferences import (
    UNKNOWN,
    Statement,
    UsageView,
    nothing_said,
    read_headers,
    robots_statements,
    usage_view,
)

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["META_KEY", "STATS_PREFIX", "UsageItemsMiddleware", "UsagePreferencesMiddleware"]

logger = logging.getLogger(__name__)

META_KEY = "robotrules_usage"
"""``response.meta`` key of the response's usage preferences."""
STATS_PREFIX = "robotrules/usage/"
_USAGE_HEADERS = frozenset(
    Headers().normkey(name)
    for name in (
        "Content-Usage",
        "Content-Signal",
        "Content-Signals",
        "tdm-reservation",
        "tdm-policy",
    )
)
"""The headers a response states usage preferences in, as Scrapy's ``Headers`` keys them."""


class UsagePreferencesMiddleware(PageMiddleware):
    """Reads each response's usage preferences; judges the items of one that refuses a purpose.

    Items are judged only when the crawl declares purposes
    (``ROBOTRULES_PURPOSES``): :meth:`from_crawler` then builds a
    :class:`UsageItemsMiddleware`. Without any, nothing can be refused, and
    the middleware stays out of the way of what callbacks yield (Scrapy
    would pass every item through it, at a cost per item).
    """

    STATS_PREFIX = STATS_PREFIX
    ITEMS_SETTING = "ROBOTRULES_USAGE_ITEMS"

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._store = self.manager.db.store
        self._tdmrep = self.manager.tdmrep

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> UsagePreferencesMiddleware:
        judging = (
            cls is UsagePreferencesMiddleware
            and crawler.settings.getbool("ROBOTSTXT_OBEY")
            and RobotsManager.for_crawler(crawler).config.purposes
        )
        return UsageItemsMiddleware(crawler) if judging else cls(crawler)

    def items_choice(self) -> tuple[str, str]:
        return self.config.usage_items, self.config.usage_field

    def read(self, response: Response) -> UsageView:
        """The preferences that apply to ``response``: robots.txt, headers, meta tags."""
        url = response.url
        statements: list[Statement] = []
        notes: list[str] = []
        request = response.request
        try:
            # The origin its request carries (computed once), unless redirected since.
            origin = origin_for(request) if request is not None and request.url == url else None
            origin = origin or origin_of(url)
        except ValueError:
            origin = None
        db = self.manager.db
        entry = self._store.get(origin) if origin is not None else None
        robots = None if entry is None else entry.robots
        licenses = () if robots is None else robots.licenses
        # Without usage lines the file states no preference: no need to ask it.
        if entry is not None and robots is not None and robots.usage_lines:
            decision = entry.explain(url, self.config.user_agent, db.precedence, db.agent_match)
            statements, notes = robots_statements(robots, decision)
        elif self._tdmrep is None and not licenses and says_nothing(response, self._html):
            return nothing_said(url)  # most responses: nothing said anywhere, nothing to count
        headers = response.headers
        stated = not _USAGE_HEADERS.isdisjoint(headers)
        if stated:
            said, header_notes = read_headers(
                headers.getlist(b"Content-Usage"),
                headers.getlist(b"Content-Signal"),
                headers.getlist(b"Content-Signals"),
            )
            statements, notes = statements + said, notes + header_notes
        metas = response_metas(response, self._html)
        tdm = None
        if self._tdmrep is not None:
            tdm_entry = self._tdmrep.entry(origin) if origin is not None else None
            if tdm_entry is not None:
                tdm = tdm_entry.rep()
                if tdm_entry.unknown:  # downloaded while its tdmrep.json was unreachable
                    self.stats.inc_value(f"{STATS_PREFIX}tdmrep/unknown")
        if not (stated or statements or notes or metas or licenses) and tdm is None:
            return nothing_said(url)  # nothing to read, nothing to count
        view = usage_view(
            url,
            statements,
            tdm=tdm,
            tdm_headers=(
                (headers.getlist(b"tdm-reservation"), headers.getlist(b"tdm-policy"))
                if stated
                else ((), ())
            ),
            metas=metas,
            notes=notes if robots is None else [*notes, *robots.license_notes],
            licenses=licenses,
        )
        self._count(view)
        return view

    def _count(self, view: UsageView) -> None:
        inc = self.stats.inc_value
        if view.statements:
            inc(f"{STATS_PREFIX}responses")
        if view.licenses:
            inc(f"{STATS_PREFIX}licensed")
        for purpose, preference in view.preferences.items():
            if preference.state != UNKNOWN:
                inc(f"{STATS_PREFIX}{purpose}/{preference.state}")
        if any(s.error for s in view.statements):
            inc(f"{STATS_PREFIX}unparsable")
        if any(s.unknown for s in view.statements):
            inc(f"{STATS_PREFIX}unknown")

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        callback_meta(response)[META_KEY] = self.read(response)


class UsageItemsMiddleware(UsagePreferencesMiddleware):
    """The usage middleware of a crawl with purposes: it also judges what callbacks yield."""

    def _judge(self, response: Response) -> tuple[UsageView, str]:
        view = response.meta.get(META_KEY)
        if not isinstance(view, UsageView):
            view = self.read(response)
        refused = view.refused(self.config.purposes)
        if not refused:
            return view, ""
        reason = "; ".join(str(p) for p in refused)
        if view.licenses:  # RSL 1.0: where the site's terms are, beside the refusal (a few)
            reason += "; " + name_licenses(view.licenses)
        return view, reason

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        _, reason = self._judge(response)
        if not reason:
            yield from (each for each in result if each is not None)
            return
        for each in result:
            judged = self.item(each, response, reason)
            if judged is not None:
                yield judged

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        _, reason = self._judge(response)
        if not reason:
            async for each in result:
                if each is not None:
                    yield each
            return
        async for each in result:
            judged = self.item(each, response, reason)
            if judged is not None:
                yield judged

    def item(self, item: Any, response: Response, reason: str) -> Any:
        """Mark, drop or keep an item of a response whose preferences refuse a declared purpose."""
        if isinstance(item, Request) or item is None:
            return item
        return self.items.apply(item, response, reason)
