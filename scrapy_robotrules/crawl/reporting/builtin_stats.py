"""Scrapy's own ``robotstxt/*`` stats, kept with the meaning its ``RobotsTxtMiddleware`` gives them.

Dashboards and monitors written for Scrapy's built-in middleware read
``robotstxt/request_count``, ``robotstxt/response_count``,
``robotstxt/response_status_count/<status>``,
``robotstxt/exception_count/<exception>`` and ``robotstxt/forbidden``. They
are counted here at the points where the built-in middleware counts them,
beside this package's own ``robotrules/*`` keys:

- a robots.txt download, once it ends (redirects followed within it, as
  Scrapy's redirect middleware follows them for the built-in):
  ``request_count``, and either ``response_count`` with the final status,
  or ``exception_count/`` keyed ``str(type(error))`` as the built-in keys
  it (``<class 'module.Name'>``; none for ``IgnoreRequest``);
- a request dropped as forbidden by robots.txt: ``forbidden``. With the
  built-in, a request meets robots.txt in the downloader, after the
  scheduler's duplicate filter; here it may be dropped before the
  scheduler, duplicates included. So a request dropped at scheduling time
  counts once per request fingerprint (every time with ``dont_filter``),
  as it would have reached the downloader once. Requests refused by usage
  preferences alone are no robots.txt verdict and are not counted.

With Scrapy's middleware left on beside this package's (enabled by hand),
its robots.txt requests are refused before they are sent, and it counts
``request_count`` itself (one per origin, as here): not counted twice.

The crawl's pages cost nothing more: only a forbidden request does, one set
lookup for a URL seen before, a fingerprint for a new one.

SPEC 7 (why a request was dropped) and 8 (the fetch, its outcomes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["BUILTIN_PREFIX", "URLS_KEPT", "BuiltinStats"]

BUILTIN_PREFIX = "robotstxt/"
"""The prefix of Scrapy's ``RobotsTxtMiddleware`` stats."""
URLS_KEPT = 10_000
"""Forbidden URLs remembered as such, most recent first: a repeat of one costs no fingerprint."""


class BuiltinStats:
    """One crawler's ``robotstxt/*`` stats, counted as Scrapy's built-in middleware counts them."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._inc = crawler.stats.inc_value
        self._fingerprints: set[bytes] = set()
        """Fingerprints of the forbidden requests counted at scheduling time (as a duplicate
        filter keeps them)."""
        self._urls: dict[str, None] = {}
        """The last URLS_KEPT plain GET URLs among them, oldest first."""
        self.beside = False
        """Scrapy's own middleware runs too: it counts its ``request_count`` itself."""

    def fetched(self, response: Response | None, error: BaseException | None) -> None:
        """A robots.txt download ended, with its final response or the error that stopped it."""
        inc = self._inc
        if not self.beside:
            inc("robotstxt/request_count")
        if response is not None:
            inc("robotstxt/response_count")
            inc(f"robotstxt/response_status_count/{response.status}")
        elif not isinstance(error, IgnoreRequest):
            inc(f"robotstxt/exception_count/{type(error)}")

    def forbidden(self, request: Request, *, scheduling: bool) -> None:
        """A request robots.txt forbids, dropped; ``scheduling``: before the duplicate filter."""
        if scheduling and not request.dont_filter and self._seen(request):
            return
        self._inc("robotstxt/forbidden")

    def _seen(self, request: Request) -> bool:
        """Whether a request with ``request``'s fingerprint was counted; remembered if not."""
        urls = self._urls
        url = request.url if request.method == "GET" and not request.body else None
        if url is not None and url in urls:
            return True
        fingerprint = self.crawler.request_fingerprinter.fingerprint(request)
        seen = fingerprint in self._fingerprints
        self._fingerprints.add(fingerprint)
        if url is not None:
            urls[url] = None
            if len(urls) > URLS_KEPT:
                del urls[next(iter(urls))]
        return seen
