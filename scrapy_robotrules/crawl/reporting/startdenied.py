"""The ``robotstxt_denied`` finish reason, where Scrapy's own middleware gives it.

Scrapy's development branch ends a crawl with the ``robotstxt_denied``
finish reason when no start request could be crawled and robots.txt denied
at least one of them (its ``RobotsTxtMiddleware``, through the
``is_start_request`` meta key that ``StartSpiderMiddleware`` sets). Where
the installed Scrapy does (:data:`.compat.ROBOTSTXT_DENIED`), this package,
which replaces that middleware, does the same: a start request is crawled
once its response is received; one is denied when robots.txt forbids it
(SPEC 7; not a refusal by tdmrep.json, which is no robots.txt). The reason
is given when the spider idles with nothing left to wait for.

SPEC 7 (a request robots.txt forbids, told of as Scrapy tells of it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals

from scrapy_robotrules.crawl import compat

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["START_REQUEST", "DeniedStarts"]

logger = logging.getLogger(__name__)

START_REQUEST = "is_start_request"
"""Request meta key Scrapy's ``StartSpiderMiddleware`` sets on start requests."""


class DeniedStarts:
    """Whether every start request robots.txt let be crawled was none, and one was denied."""

    def __init__(self, crawler: Crawler) -> None:
        self.enabled = compat.ROBOTSTXT_DENIED
        """Read when the crawl starts: the installed Scrapy gives this finish reason."""
        self.crawled = False
        self.denied_one = False
        if self.enabled:
            crawler.signals.connect(self._received, signal=signals.response_received)

    def _received(self, request: Request) -> None:
        if not self.crawled and request.meta.get(START_REQUEST):
            self.crawled = True

    def denied(self, request: Request) -> None:
        """robots.txt forbade ``request``."""
        if self.enabled and not self.denied_one and request.meta.get(START_REQUEST):
            self.denied_one = True

    def finish_reason(self) -> str | None:
        """``robotstxt_denied`` when the crawl is to end that way (logged, as Scrapy logs it)."""
        if not self.enabled or self.crawled or not self.denied_one:
            return None
        self.enabled = False  # told once: the crawl closes now
        logger.error(
            "Stopping the crawl: no start request could be crawled, and at least one of them"
            " was forbidden by robots.txt (robotrules/forbidden counts each)"
        )
        return compat.ROBOTSTXT_DENIED_REASON
