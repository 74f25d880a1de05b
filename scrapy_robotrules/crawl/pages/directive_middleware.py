"""The spider middleware for page-level robots rules: ``X-Robots-Tag``, meta robots, nofollow links.

Every response that reaches a callback carries the rules for this crawler
in ``response.meta["robotrules_page"]`` (a
:class:`~scrapy_robotrules.engine.page.directives.PageDirectives`), HTML or not.
Then, each behind its own setting:

- ``nofollow`` (``ROBOTRULES_PAGE_NOFOLLOW``, on): the requests the callback
  yields from that response are dropped (as robots.txt drops them: a DEBUG
  line, ``request_dropped``, or :class:`.PageNofollow` for an errback);
- ``rel="nofollow"`` links (``ROBOTRULES_PAGE_NOFOLLOW_LINKS``, off): the
  requests it yields to those links are dropped. The links are read from
  the first ``ROBOTRULES_PAGE_MAX_HTML`` bytes, as the head is, by the same
  parser (work bounded by those bytes, not by the page): a link
  past them is not known to be nofollow, and a request to it is kept
  (counted in ``links_truncated``);
- ``noindex`` or a passed ``unavailable_after`` (``ROBOTRULES_PAGE_NOINDEX``):
  the items it yields are marked (default), dropped, or left alone.

``meta={"dont_obey_nofollow": True}`` on a yielded request keeps it.
Enabled by the add-on with ``ROBOTSTXT_OBEY``, like the rest of the package.

The output methods are declared from the start, never added to Scrapy's
chain during a crawl: what a callback yields from a response whose rules
drop or mark nothing is passed on as it is, and Scrapy's steps for each
object through one more middleware are a small share of a page's crawl.

SPEC: none (page-level rules go beyond robots.txt; docs/guides/page-directives.rst describes them).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin

from scrapy import Request, signals
from scrapy.http import Headers, HtmlResponse
from w3lib.html import get_base_url, strip_html5_whitespace
from w3lib.url import safe_url_string

from scrapy_robotrules.crawl.exceptions import PageNofollow
from scrapy_robotrules.crawl.pages.head import response_html, response_metas, says_nothing
from scrapy_robotrules.crawl.pages.page_middleware import PageMiddleware, callback_meta
from scrapy_robotrules.crawl.reporting.log import counted, shown_url
from scrapy_robotrules.crawl.requestmeta import DECIDED, OFFERED
from scrapy_robotrules.engine.page.directives import PageDirectives, parse_page_directives
from scrapy_robotrules.engine.page.html import nofollow_links

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from scrapy_robotrules.crawl.config.settings import RobotRulesConfig

__all__ = ["META_KEY", "OPT_OUT_KEY", "STATS_PREFIX", "PageDirectivesMiddleware"]

logger = logging.getLogger(__name__)

META_KEY = "robotrules_page"
"""``response.meta`` key of the page's rules for this crawler."""
OPT_OUT_KEY = "dont_obey_nofollow"
"""``Request.meta`` key: a yielded request with it set is never dropped for nofollow."""
STATS_PREFIX = "robotrules/page/"
_X_ROBOTS_TAG = Headers().normkey(b"X-Robots-Tag")


def _link_key(url: str) -> str:
    return urldefrag(url)[0]


def _restricts(config: RobotRulesConfig, page: PageDirectives) -> bool:
    """Whether what a callback yields from a page with ``page`` may be dropped or marked."""
    return bool(
        page.excluded() or config.page_nofollow_links or (config.page_nofollow and page.nofollow)
    )


class _Output:
    """What one response's callback yields, judged against that response's rules."""

    def __init__(self, middleware: PageDirectivesMiddleware, response: Response) -> None:
        self.middleware = middleware
        self.response = response
        page = response.meta.get(META_KEY)
        self.page = page if isinstance(page, PageDirectives) else middleware.read(response)
        self.excluded = self.page.excluded()
        self._links: frozenset[str] | None = None
        self.restricts = _restricts(middleware.config, self.page)
        """Whether anything the callback yields may be dropped or marked (else passed as is)."""

    def judged(self, result: Iterable[Any]) -> Iterator[Any]:
        """What of ``result`` goes on, each judged."""
        for each in result:
            judged = self.judge(each)
            if judged is not None:
                yield judged

    def judge(self, output: Any) -> Any:
        if isinstance(output, Request):
            return self.request(output)
        if output is None or not self.excluded:
            return output
        return self.middleware.noindex_item(output, self.response, self.page)

    def request(self, request: Request) -> Request | None:
        config = self.middleware.config
        if config.page_nofollow and self.page.nofollow:
            source = self.page.sources("nofollow")[0]
            reason = f"the page says {source}"
            return self.middleware.drop(request, self.response, "nofollow", reason)
        if config.page_nofollow_links and _link_key(request.url) in self.nofollow_links():
            return self.middleware.drop(
                request, self.response, "nofollow_link", 'it links with rel="nofollow"'
            )
        return request

    def nofollow_links(self) -> frozenset[str]:
        """URLs of the response's ``<a>`` and ``<area>`` links with ``rel="nofollow"``.

        Read in the first ``ROBOTRULES_PAGE_MAX_HTML`` bytes, joined to the
        page's ``<base href>`` as ``response.urljoin`` would, without
        parsing the page (nor decoding it all, as ``response.text`` would).
        """
        if self._links is None:
            self._links = frozenset()
            response = self.response
            if isinstance(response, HtmlResponse):
                limit = self.middleware.config.page_max_html
                text, encoding = response_html(response, limit)
                base = get_base_url(text[:4096], response.url, encoding)
                self._links = frozenset(
                    _link_key(
                        safe_url_string(urljoin(base, strip_html5_whitespace(href)), encoding)
                    )
                    for href in nofollow_links(text, limit=len(text))
                )
                if len(response.body) > limit:
                    self.middleware.links_truncated(response)
        return self._links


class PageDirectivesMiddleware(PageMiddleware):
    """Reads each response's robots rules; obeys nofollow and noindex in what callbacks yield."""

    STATS_PREFIX = STATS_PREFIX
    ITEMS_SETTING = "ROBOTRULES_PAGE_NOINDEX"

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.manager.summary_lines.append(self.summary)
        self._nothing = parse_page_directives(
            (), (), self.config.user_agent, self.config.agent_match
        )
        """The rules of a response without any: one object for all of them (it is frozen)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def items_choice(self) -> tuple[str, str]:
        return self.config.page_noindex, self.config.page_noindex_field

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        callback_meta(response)[META_KEY] = self.read(response)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        output = _Output(self, response)
        if not output.restricts:
            return result
        return output.judged(result)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        output = _Output(self, response)
        if not output.restricts:
            async for each in result:
                yield each
            return
        async for each in result:
            judged = output.judge(each)
            if judged is not None:
                yield judged

    def read(self, response: Response) -> PageDirectives:
        """The rules of ``response`` for this crawler: its headers, and its head if HTML."""
        if says_nothing(response, self._html):
            return self._nothing  # most responses: nothing to read, nothing to count
        # Scrapy's Headers is a dict of normalised names: read as one, without normalising.
        headers = dict.get(response.headers, _X_ROBOTS_TAG) or ()
        metas = response_metas(response, self._html)
        if not headers and not metas:
            return self._nothing  # nothing to read, nothing to count
        page = parse_page_directives(
            headers, metas, self.config.user_agent, self.config.agent_match
        )
        self._count_response(page)
        return page

    def _count_response(self, page: PageDirectives) -> None:
        inc = self.stats.inc_value
        if page.applied:
            inc(f"{STATS_PREFIX}responses")
        for name in page.in_effect:
            inc(f"{STATS_PREFIX}directive/{name}")
        if page.expired():
            inc(f"{STATS_PREFIX}directive/unavailable_after/passed")
        for kind, found in (
            ("other_crawler", page.other_crawlers),
            ("unknown", page.unknown),
            ("malformed", page.malformed),
            ("truncated", page.truncated),
        ):
            if found:
                inc(f"{STATS_PREFIX}{kind}")

    def drop(self, request: Request, response: Response, why: str, reason: str) -> Request | None:
        """Drop ``request`` unless it opted out; count and log either way.

        Dropped as robots.txt drops a request: one with an errback goes on,
        carrying why (:class:`.PageNofollow`), for the downloader middleware
        to raise at once, so that the errback hears it through Scrapy; one
        without is told of with ``request_dropped`` and not returned.
        """
        if request.meta.get(OPT_OUT_KEY):
            self.stats.inc_value(f"{STATS_PREFIX}requests/opted_out")
            return request
        self.stats.inc_value(f"{STATS_PREFIX}requests/{why}")
        spider = self.crawler.spider
        logger.debug(
            "Dropped <%(method)s %(url)s> from %(page)s: %(reason)s",
            {
                "method": request.method,
                "url": shown_url(request.url),
                "page": shown_url(response.url),
                "reason": reason,
            },
            extra={"spider": spider},
        )
        if request.errback is not None and self.manager.raises_let_through:
            meta = request.meta
            meta[DECIDED] = PageNofollow(why, reason, shown_url(response.url))
            meta[OFFERED] = request.url  # not a robots.txt offer: the scheduler lets it by
            return request
        self.crawler.signals.send_catch_log(
            signal=signals.request_dropped, request=request, spider=spider
        )
        return None

    def links_truncated(self, response: Response) -> None:
        """Count and log a page whose links were read only in part."""
        self.stats.inc_value(f"{STATS_PREFIX}links_truncated")
        logger.debug(
            'rel="nofollow" links of %(page)s read in its first %(limit)d bytes only'
            " (ROBOTRULES_PAGE_MAX_HTML): requests to links past them are kept",
            {"page": shown_url(response.url), "limit": self.config.page_max_html},
            extra={"spider": self.crawler.spider},
        )

    def noindex_item(self, item: Any, response: Response, page: PageDirectives) -> Any:
        """Mark, drop or keep an item yielded from a page that must not be indexed."""
        if page.noindex:
            reason = f"noindex: {page.sources('noindex')[0]}"
        else:
            assert page.unavailable_after is not None
            reason = f"unavailable_after {page.unavailable_after.isoformat()} has passed"
        return self.items.apply(item, response, reason)

    def summary(self) -> str | None:
        """The closing summary's line on page-level rules; ``None`` if there is nothing to say."""

        def value(key: str) -> int:
            return int(self.stats.get_value(f"{STATS_PREFIX}{key}", 0))

        stats = self.stats.get_stats()
        if not any(key.startswith(STATS_PREFIX) for key in stats):
            return None
        found = sorted(
            (key.removeprefix(f"{STATS_PREFIX}directive/"), count)
            for key, count in stats.items()
            if key.startswith(f"{STATS_PREFIX}directive/")
        )
        rules = ", ".join(f"{name} {count}" for name, count in found)
        items = ", ".join(
            f"{value(f'items/{what}')} {what}"
            for what in ("marked", "unmarked", "dropped", "ignored")
            if value(f"items/{what}")
        )
        return (
            f"page directives: {counted(value('responses'), 'response')} had rules for this crawler"
            f"{f' ({rules})' if rules else ''};"
            f" requests dropped: {value('requests/nofollow')} for nofollow,"
            f" {value('requests/nofollow_link')} for rel=nofollow links;"
            f" noindex items: {items or 'none'}"
        )
