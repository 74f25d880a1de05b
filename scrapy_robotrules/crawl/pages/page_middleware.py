"""What the page-level spider middlewares share: their set-up, and where a page's reading goes.

:class:`~.directive_middleware.PageDirectivesMiddleware` (page directives)
and :class:`~.usage.UsagePreferencesMiddleware` (usage preferences) are on
only with ``ROBOTSTXT_OBEY``, as the rest of the package is; each reads
every response that reaches a callback, in its first
``ROBOTRULES_PAGE_MAX_HTML`` bytes, leaves what it read in the meta the
callback sees, and marks, drops or keeps the items of a page that refuses
them (:class:`~.items.ItemVerdict`), counted under its own stats prefix.

SPEC: none (page directives and usage preferences go beyond robots.txt).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.crawl.pages.items import ItemVerdict

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["PageMiddleware", "callback_meta"]


class PageMiddleware:
    """A spider middleware that reads each page for the crawl, and judges the items it refuses."""

    STATS_PREFIX: ClassVar[str]
    """Where its stats are counted (``robotrules/page/``, ``robotrules/usage/``)."""
    ITEMS_SETTING: ClassVar[str]
    """The setting that chooses what becomes of a refused item (``mark``, ``drop``, ``ignore``)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.manager = RobotsManager.for_component(crawler)
        self.config = self.manager.config
        self.stats = crawler.stats
        mode, field = self.items_choice()
        self.items = ItemVerdict(
            crawler,
            mode=mode,
            field=field,
            stats_prefix=self.STATS_PREFIX,
            setting=self.ITEMS_SETTING,
        )
        self._html = self.config.page_max_html

    def items_choice(self) -> tuple[str, str]:
        """What :attr:`ITEMS_SETTING` chose for a refused item, and the field a mark goes in."""
        raise NotImplementedError


def callback_meta(response: Response) -> dict[str, Any]:
    """The meta a callback sees for ``response``: its request's.

    Without a request, ``response.meta`` raises Scrapy's own error, which says why.
    """
    request = response.request
    return request.meta if request is not None else response.meta
