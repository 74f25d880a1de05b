"""The demo's local site: three origins on one local web server, inside the crawl process.

``shop``, ``blog`` and ``flaky`` are host names under ``.localhost`` (RFC 6761:
loopback), told apart by the ``Host`` header, all on one port of 127.0.0.1:

- ``shop`` serves ``example_project/robots.txt``: ``Disallow: /private/`` with
  ``Allow: /private/press-kit.html`` inside it (allowed or not depending on
  the precedence mode), ``Crawl-delay: 0.5`` and a ``Sitemap`` line.
- ``blog`` is closed to every crawler but ``robotrules-demo``, which has a
  group of its own (a named group never inherits from ``*``).
- ``flaky`` answers its first three robots.txt fetches with 503 and 200
  afterwards: Scrapy's own RetryMiddleware tries twice more at once (retries
  apply to robots.txt as to any request), then scrapy-robotrules parks the
  origin's pages as unreachable, fetches robots.txt again after
  ``ROBOTRULES_RETRY_DELAY``, and crawls them.

The server is the standard library's, in threads of its own, so the demo
runs the same with a Twisted reactor or without one
(``-s TWISTED_REACTOR_ENABLED=False``). It also answers as an HTTP proxy:
the spider sends its requests to the local site through it
(``meta["proxy"]``), so ``*.localhost`` needs no resolver of its own, in
either mode; the URLs, origins and robots.txt files are the hosts' own.
"""

from __future__ import annotations

import html
import logging
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["HOSTS", "LocalSite"]

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


class _Handler(BaseHTTPRequestHandler):
    """One request to the local site, asked directly or through it as a proxy."""

    server: _Server

    def do_GET(self) -> None:
        parts = urlsplit(self.path)  # absolute when asked as a proxy
        host = (parts.hostname or self.headers.get("Host", "").rpartition(":")[0]).lower()
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        status, content_type, body = self.server.site.answer(host, path)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # no access log


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, site: LocalSite) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.site = site


class LocalSite:
    """The server: listens on a free port of 127.0.0.1 as soon as it is built, until ``stop()``."""

    def __init__(self) -> None:
        self.robots_fetches: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server = _Server(self)
        self.port: int = self._server.server_address[1]
        self.proxy = f"http://127.0.0.1:{self.port}"
        """The site as a proxy: a request for any of its hosts sent there reaches it."""
        self.bases = {name: f"http://{name}.localhost:{self.port}" for name in HOSTS}
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        logger.info("local site: %s on 127.0.0.1:%d", ", ".join(self.bases.values()), self.port)

    def url(self, host: str, path: str = "/") -> str:
        return self.bases[host] + path

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def answer(self, host: str, path: str) -> tuple[int, str, bytes]:
        """Status, content type and body for ``path`` of ``host`` (``shop.localhost``)."""
        name = host.removesuffix(".localhost")
        if name not in PAGES:
            return 404, "text/plain", b"Not Found"
        if path == "/robots.txt":
            return self._robots(name)
        if name == "shop" and path == "/sitemap.xml":
            return 200, "application/xml", self._sitemap()
        links = PAGES[name].get(path)
        if links is None:
            return 404, "text/plain", b"Not Found"
        return 200, "text/html; charset=utf-8", self._page(host, path, links)

    def _robots(self, name: str) -> tuple[int, str, bytes]:
        with self._lock:
            self.robots_fetches[name] += 1
            fetch = self.robots_fetches[name]
        if name == "flaky" and fetch <= FLAKY_FAILURES:
            status, body = 503, b"Service Unavailable"
        else:
            status, body = 200, ROBOTS[name]
        logger.info(
            "local site: robots.txt of %s answered %d (fetch %d)", self.bases[name], status, fetch
        )
        return status, "text/plain", body

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
