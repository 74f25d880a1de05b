"""What a spider middleware does with an item whose page refuses it: mark, drop or keep.

Shared by the page-level directives (``noindex``, ``unavailable_after``)
and the usage preferences (a refused purpose): ``mark`` (the default) sets
a field holding the reason through itemadapter, and keeps the item; an
item that cannot take the field is kept unmarked, counted, and the first
one logged as a WARNING. ``drop`` drops it with Scrapy's ``item_dropped``
signal; ``ignore`` keeps it as it is. Each is counted.

SPEC: none (page directives and usage preferences go beyond robots.txt).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DropItem

from scrapy_robotrules.crawl.reporting.log import shown_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["ItemVerdict"]

logger = logging.getLogger(__name__)


class ItemVerdict:
    """Applies one ``mode`` to refused items, counting under ``stats_prefix``."""

    def __init__(
        self, crawler: Crawler, *, mode: str, field: str, stats_prefix: str, setting: str
    ) -> None:
        self.crawler = crawler
        self.mode = mode
        self.field = field
        self.prefix = stats_prefix
        self.setting = setting
        """The setting that chooses ``mode``, named in the WARNING about unmarkable items."""
        self._warned_unmarked = False

    def apply(self, item: Any, response: Response, reason: str) -> Any:
        """``item`` (marked, or as it was), or ``None`` when it is dropped."""
        stats = self.crawler.stats
        assert stats is not None
        spider = self.crawler.spider
        if self.mode == "ignore":
            stats.inc_value(f"{self.prefix}items/ignored")
            return item
        page = shown_url(response.url)
        if self.mode == "drop":
            stats.inc_value(f"{self.prefix}items/dropped")
            logger.debug(
                "Dropped an item from %(page)s: %(reason)s",
                {"page": page, "reason": reason},
                extra={"spider": spider},
            )
            self.crawler.signals.send_catch_log(
                signal=signals.item_dropped,
                item=item,
                response=response,
                exception=DropItem(reason),
                spider=spider,
            )
            return None
        try:
            ItemAdapter(item)[self.field] = reason
        except (KeyError, TypeError, AttributeError):
            stat = f"{self.prefix}items/unmarked"
            stats.inc_value(stat)
            log = logger.debug if self._warned_unmarked else logger.warning
            self._warned_unmarked = True
            log(
                "An item from %(page)s (%(reason)s) has no %(field)r field to mark it: kept"
                " unmarked, counted as %(stat)s (declare the field, or set %(setting)s"
                " to 'drop')",
                {
                    "page": page,
                    "reason": reason,
                    "field": self.field,
                    "stat": stat,
                    "setting": self.setting,
                },
                extra={"spider": spider},
            )
            return item
        stats.inc_value(f"{self.prefix}items/marked")
        return item
