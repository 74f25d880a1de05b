"""The demo's local site: three origins on one Twisted web server, inside the crawl process.

``shop``, ``blog`` and ``flaky`` are host names under ``.localhost`` (RFC 6761:
loopback), told apart by the ``Host`` header, all on one port of 127.0.0.1:

- ``shop`` serves ``example_project/robots.txt``: ``Disallow: /private/`` with
  ``Allow: /private/press-kit.html`` inside it (allowed or not depending on
  the precedence mode), ``Crawl-delay: 0.5`` and a ``Sitemap`` line.
- ``blog`` is closed to every crawler but ``robotrules-demo``, which has a
  group of its own (a named group never inherits from ``*``).
- ``flaky`` answers its first three robots.txt fetches with 503 and 200
  afterwards: Scrapy's own RetryMiddleware tries twice more at once (retries
  apply to robots.txt as to any request), then scrapy-robotrules holds the
  origin's pages as unreachable, fetches robots.txt again after
  ``ROBOTRULES_RETRY_DELAY``, and crawls them.

``LocalhostResolver`` sends ``*.localhost`` to 127.0.0.1 whatever the system
resolver would say; other names are looked up as usual, so the same settings
crawl real sites too.
"""

from __future__ import annotations

import html
import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer
from twisted.web.resource import Resource
from twisted.web.server import Site

if TYPE_CHECKING:
    from twisted.internet.defer import Deferred
    from twisted.internet.posixbase import PosixReactorBase
    from twisted.internet.tcp import Port
    from twisted.web import http
    from twisted.web.server import Request

__all__ = ["HOSTS", "LocalSite", "LocalhostResolver"]

logger = logging.getLogger(__name__)

HOSTS = ("shop", "blog", "flaky")
"""The origins the site plays: ``http://<name>.localhost:<port>``."""

# One more than Scrapy's default RETRY_TIMES (2), so the 503 outlasts its
# retries and reaches scrapy-robotrules.
FLAKY_FAILURES = 3

ROBOTS: dict[str, bytes] = {
    # The file this project's README's "robotrules compare" example reads too.
    "shop": (Path(__file__).resolve().parent.parent / "robots.txt").read_bytes(),
    "blog": b"""\
# The blog is open to the demo crawler only.
User-agent: *
Disallow: /

User-agent: robotrules-demo
Disallow: /drafts/
""",
    "flaky": b"""\
# Served once the 503s are over.
User-agent: *
Disallow: /admin/
""",
}

# Page -> its links. "{blog}" and the like stand for another origin's base URL.
PAGES: dict[str, dict[str, tuple[str, ...]]] = {
    "shop": {
        "/": (
            "/products",
            "/about.html",
            "/private/press-kit.html",
            "/private/orders.html",
            "/cgi-bin/search?q=robots",
            "{blog}/",
            "{flaky}/",
        ),
        "/products": ("/products/1.html", "/products/2.html", "/products?sessionid=42"),
        "/products/1.html": ("/products", "/private/orders.html"),
        "/products/2.html": ("/products",),
        "/products?sessionid=42": (),
        "/about.html": ("/", "/private/press-kit.html"),
        "/private/press-kit.html": ("/about.html",),
        "/private/orders.html": (),
        "/cgi-bin/search?q=robots": (),
    },
    "blog": {
        "/": ("/posts/hello.html", "/posts/robots.html", "/drafts/next.html", "{shop}/"),
        "/posts/hello.html": ("/",),
        "/posts/robots.html": ("/",),
        "/drafts/next.html": (),
    },
    "flaky": {
        "/": ("/status.html", "/admin/"),
        "/status.html": ("/",),
        "/admin/": (),
    },
}

SITEMAP = ("/", "/products", "/products/1.html", "/products/2.html", "/about.html")
"""The shop pages its ``/sitemap.xml`` lists (robots.txt: ``Sitemap: /sitemap.xml``)."""


class LocalhostResolver(CachingThreadedResolver):
    """A ``TWISTED_DNS_RESOLVER``: ``localhost`` and ``*.localhost`` are 127.0.0.1."""

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        host = name.lower().rstrip(".")
        if host == "localhost" or host.endswith(".localhost"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)


class _QuietSite(Site):
    """A ``Site`` without the access log and the factory start/stop messages."""

    noisy = False

    def log(self, request: http.Request) -> None:
        pass


class LocalSite(Resource):
    """The server: listens on a free port of 127.0.0.1 as soon as it is built, until ``stop()``.

    Build it in the running reactor (from the spider's ``start()``).
    """

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        from twisted.internet import reactor

        self.robots_fetches: Counter[str] = Counter()
        site = _QuietSite(self)  # type: ignore[no-untyped-call]
        self._port: Port = cast("PosixReactorBase", reactor).listenTCP(  # type: ignore[no-untyped-call]
            0, site, interface="127.0.0.1"
        )
        self.port: int = self._port.getHost().port
        self.bases = {name: f"http://{name}.localhost:{self.port}" for name in HOSTS}
        logger.info("local site: %s on 127.0.0.1:%d", ", ".join(self.bases.values()), self.port)

    def url(self, host: str, path: str = "/") -> str:
        return self.bases[host] + path

    def stop(self) -> Deferred[None]:
        return defer.maybeDeferred(self._port.stopListening)

    def render_GET(self, request: Request) -> bytes:
        host = request.getRequestHostname().decode("ascii", "replace").lower()  # type: ignore[no-untyped-call]
        name = host.removesuffix(".localhost")
        path = request.uri.decode("ascii", "replace")
        if name not in PAGES:
            return self._reply(request, 404, "text/plain", b"Not Found")
        if path == "/robots.txt":
            return self._robots(request, name)
        if name == "shop" and path == "/sitemap.xml":
            return self._reply(request, 200, "application/xml", self._sitemap())
        links = PAGES[name].get(path)
        if links is None:
            return self._reply(request, 404, "text/plain", b"Not Found")
        return self._reply(request, 200, "text/html; charset=utf-8", self._page(host, path, links))

    def _robots(self, request: Request, name: str) -> bytes:
        self.robots_fetches[name] += 1
        fetch = self.robots_fetches[name]
        if name == "flaky" and fetch <= FLAKY_FAILURES:
            status, body = 503, b"Service Unavailable"
        else:
            status, body = 200, ROBOTS[name]
        logger.info(
            "local site: robots.txt of %s answered %d (fetch %d)", self.bases[name], status, fetch
        )
        return self._reply(request, status, "text/plain", body)

    def _page(self, host: str, path: str, links: tuple[str, ...]) -> bytes:
        items = "".join(
            f'<li><a href="{html.escape(href)}">{html.escape(href)}</a></li>'
            for href in (link.format(**self.bases) for link in links)
        )
        title = html.escape(host + path)
        return (
            f"<html><head><title>{title}</title></head>"
            f"<body><h1>{title}</h1><ul>{items}</ul></body></html>"
        ).encode()

    def _sitemap(self) -> bytes:
        urls = "".join(
            f"<url><loc>{html.escape(self.url('shop', path))}</loc></url>" for path in SITEMAP
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        ).encode()

    @staticmethod
    def _reply(request: Request, status: int, content_type: str, body: bytes) -> bytes:
        request.setResponseCode(status)
        request.setHeader("Content-Type", content_type)  # type: ignore[no-untyped-call]
        return body
