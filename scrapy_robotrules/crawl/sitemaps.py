"""Sitemaps from the same robots.txt fetch (SPEC 8: one fetch per origin).

A ``SitemapSpider`` whose ``sitemap_urls`` name a robots.txt downloads it
itself, and this package fetches it too: two requests to each site. Here the
downloader middleware answers the spider's request from the origin's fetch
instead (:meth:`Sitemaps.answer`): the answer holds the file's ``Sitemap``
lines, all ``SitemapSpider`` reads from it. With ``ROBOTRULES_SCHEDULE_SITEMAPS``
any spider has the sitemaps of every newly fetched origin scheduled
(``ROBOTRULES_SITEMAP_FOLLOW`` regexes choose which, as ``sitemap_follow``
does), and the pages they list go to the callbacks ``ROBOTRULES_SITEMAP_RULES``
names (``sitemap_rules``-style). ``robotrules_fetched`` still carries them.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.http import Response, TextResponse
from scrapy.spiders import SitemapSpider
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

from scrapy_robotrules.crawl import compat, signals
from scrapy_robotrules.crawl.config.table import value
from scrapy_robotrules.crawl.requestmeta import origin_for
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy.crawler import Crawler

    from scrapy_robotrules.crawl.config.policy_lookup import SitePolicies
    from scrapy_robotrules.crawl.fetching.fetches import Fetches
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.robots.robotstxt import RobotsTxt

__all__ = ["ANSWERED", "Sitemaps"]

logger = logging.getLogger(__name__)

ANSWERED = "robotrules_sitemaps"
"""Meta key of a robots.txt response answered from this package's fetch."""
_SEEN = 100_000
"""Origins whose sitemaps were scheduled, remembered (then forgotten, oldest first)."""
_MAX_SITEMAP = 50 * 1024 * 1024
"""Bytes of a sitemap read, unpacked (the sitemap protocol's own limit)."""


class Sitemaps:
    """The Sitemap lines of the fetched robots.txt, handed to the spider."""

    def __init__(
        self, crawler: Crawler, policies: SitePolicies, fetches: Fetches, reporter: Reporter
    ) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.policies = policies
        self.fetches = fetches
        self.reporter = reporter
        self.schedule_sitemaps: bool = value(settings, "ROBOTRULES_SCHEDULE_SITEMAPS")
        self.follow: tuple[re.Pattern[str], ...] = value(settings, "ROBOTRULES_SITEMAP_FOLLOW")
        self.rules: tuple[tuple[re.Pattern[str], str], ...] = value(
            settings, "ROBOTRULES_SITEMAP_RULES"
        )
        self._seen: dict[str, None] = {}
        if self.schedule_sitemaps:
            crawler.signals.connect(self._fetched, signal=signals.robotrules_fetched)

    # A SitemapSpider's robots.txt request, answered from the fetch.

    async def answer(self, request: Request) -> Response | None:
        """The spider's own robots.txt request answered from the origin's fetch, or ``None``."""
        if not isinstance(self.crawler.spider, SitemapSpider):
            return None
        origin = origin_for(request)
        if request.url != f"{origin}/robots.txt":
            return None
        policy = self.policies.for_origin(origin)
        if policy is not None and (policy.ignore or policy.robots_txt is not None):
            return None  # not fetched here: the spider downloads the site's file
        entry = await self.fetches.fresh_entry(origin, request)
        if entry is None or entry.outcome is Outcome.UNREACHABLE:
            return None  # the spider tries it itself
        self.reporter.inc("sitemaps/answered")
        robots = entry.robots if entry.outcome is Outcome.RULES else None
        sitemaps = robots.sitemaps if robots is not None else []
        body = "".join(f"Sitemap: {url}\n" for url in sitemaps).encode()
        status = 200 if robots is not None else (entry.status or 404)
        # A TextResponse: Scrapy 2.13 does not choose the class of a
        # response a middleware returns, and SitemapSpider reads ``.text``.
        return TextResponse(
            request.url,
            status=status,
            body=body,
            headers={"Content-Type": "text/plain; charset=utf-8"},
            encoding="utf-8",
            request=request,
        )

    # ROBOTRULES_SCHEDULE_SITEMAPS: every newly fetched origin's sitemaps scheduled.

    def _fetched(self, origin: str, robots: RobotsTxt | None, **_: Any) -> None:
        if robots is None or not robots.sitemaps or origin in self._seen:
            return
        self._seen[origin] = None
        while len(self._seen) > _SEEN:
            del self._seen[next(iter(self._seen))]
        engine = compat.engine(self.crawler)
        if engine is None:
            return
        for url in self._followed(robots.sitemaps):
            engine.crawl(self._sitemap_request(url))

    def _followed(self, urls: list[str]) -> Iterator[str]:
        for url in urls:
            if any(pattern.search(url) for pattern in self.follow):
                self.reporter.inc("sitemaps/scheduled")
                yield url

    def _sitemap_request(self, url: str) -> Request:
        return Request(url, callback=self._parse_sitemap, dont_filter=False)

    def _parse_sitemap(self, response: Response) -> Iterator[Request]:
        body = response.body
        if body[:2] == b"\x1f\x8b":
            try:
                body = gunzip(body, max_size=_MAX_SITEMAP)
            except (OSError, ValueError):
                body = b""
        try:
            sitemap = Sitemap(body)
        except Exception:  # lxml refuses it: not a sitemap
            logger.info("Not a sitemap: %(url)s", {"url": response.url})
            return
        urls = [entry["loc"] for entry in sitemap if "loc" in entry]
        if sitemap.type == "sitemapindex":
            for url in self._followed(urls):
                yield self._sitemap_request(url)
            return
        spider = self.crawler.spider
        for url in urls:
            for pattern, name in self.rules:
                if pattern.search(url):
                    callback = getattr(spider, name, None)
                    if callback is not None:
                        yield Request(url, callback=callback)
                    break
