"""Many synthetic sites on one local port, for ``crawl.py``.

One Twisted web server on 127.0.0.1 answers for every host name and picks
the site by the ``Host`` header: ``site<i>.bench`` is site ``i``.
``LoopbackResolver`` (a ``TWISTED_DNS_RESOLVER``) sends every name to
127.0.0.1, so a crawl can use thousands of host names without real DNS.

Each site has ``pages`` pages that all link to each other: the home page
``/`` and ``/page/<k>``; the disallowed ones (if any) are ``/private/<k>``
and its robots.txt says ``Disallow: /private/``. What each site's robots.txt
does (answer at once, answer late, never answer) is set by the plan.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast

from twisted.internet import defer
from twisted.internet.interfaces import IResolverSimple
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site
from zope.interface import implementer  # type: ignore[import-untyped]

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.base import ReactorBase
    from twisted.internet.defer import Deferred
    from twisted.internet.posixbase import PosixReactorBase
    from twisted.web import http

HOST_SUFFIX = ".bench"
ROBOTS_DISALLOW = b"User-agent: *\nDisallow: /private/\n"
"""Every site's robots.txt: only ``/private/`` is disallowed."""


def get_reactor() -> PosixReactorBase:
    """The installed reactor, imported late so importing this module never installs one."""
    from twisted.internet import reactor

    return cast("PosixReactorBase", reactor)


def host_name(site: int) -> str:
    return f"site{site}{HOST_SUFFIX}"


@dataclass(frozen=True)
class SitePlan:
    """What the server plays: ``sites`` sites of ``pages`` pages each.

    ``slow`` sites answer robots.txt after ``slow_delay`` seconds, ``hang``
    sites never answer it; site ``i`` has ``disallowed[i]`` of its pages under
    ``/private/`` (never the home page).
    """

    sites: int
    pages: int
    slow: frozenset[int] = frozenset()
    hang: frozenset[int] = frozenset()
    slow_delay: float = 10.0
    disallowed: tuple[int, ...] = field(default=())

    @classmethod
    def build(
        cls,
        sites: int,
        pages: int,
        *,
        slow_share: float = 0.0,
        hang_share: float = 0.0,
        slow_delay: float = 10.0,
        disallowed_share: float = 0.0,
        seed: int = 9309,
    ) -> SitePlan:
        """A plan with the given shares, the sites picked by a seeded random draw."""
        rng = random.Random(seed)
        order = list(range(sites))
        rng.shuffle(order)
        n_slow = round(sites * slow_share)
        n_hang = round(sites * hang_share)
        slow = frozenset(order[:n_slow])
        hang = frozenset(order[n_slow : n_slow + n_hang])
        # Spread the disallowed pages so that their total is the share of all
        # pages (1.5 of 5 pages -> 1, 2, 1, 2, ...), never the home page.
        per_site = disallowed_share * pages
        disallowed = tuple(
            min(pages - 1, int(per_site * (i + 1)) - int(per_site * i)) for i in range(sites)
        )
        return cls(sites, pages, slow, hang, slow_delay, disallowed)

    def n_disallowed(self, site: int) -> int:
        return self.disallowed[site] if self.disallowed else 0

    def paths(self, site: int) -> list[str]:
        """The site's page paths; the last ``n_disallowed`` are under ``/private/``."""
        allowed = self.pages - self.n_disallowed(site)
        return ["/"] + [
            f"/page/{k}" if k < allowed else f"/private/{k}" for k in range(1, self.pages)
        ]

    def total_pages(self) -> int:
        return self.sites * self.pages

    def allowed_pages(self, *, skip_hang: bool = False) -> int:
        """Pages outside ``/private/``; ``skip_hang`` leaves out sites whose robots.txt hangs."""
        return sum(
            self.pages - self.n_disallowed(i)
            for i in range(self.sites)
            if not (skip_hang and i in self.hang)
        )


class _WebRequest(Protocol):
    """What the server uses of ``twisted.web.server.Request``, typed (Twisted's is not)."""

    path: bytes

    def getRequestHostname(self) -> bytes: ...
    def setResponseCode(self, code: int) -> None: ...
    def setHeader(self, name: str, value: str) -> None: ...
    def write(self, data: bytes) -> None: ...
    def finish(self) -> None: ...
    def notifyFinish(self) -> Deferred[None]: ...


class _QuietSite(Site):
    """A ``Site`` without the access log."""

    noisy = False

    def log(self, request: http.Request) -> None:
        pass


class SitesServer(Resource):
    """Plays a :class:`SitePlan` on 127.0.0.1 (port 0); ``url(site, path)`` builds URLs."""

    isLeaf = True

    def __init__(self, plan: SitePlan) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.plan = plan
        self.robots_requests = 0
        self.robots_by_site: Counter[int] = Counter()
        self.page_requests = 0
        self._reactor = get_reactor()
        self._bodies: dict[int, bytes] = {}
        site = _QuietSite(self)  # type: ignore[no-untyped-call]
        self._port = self._reactor.listenTCP(  # type: ignore[no-untyped-call]
            0, site, interface="127.0.0.1"
        )
        self.port: int = self._port.getHost().port

    def url(self, site: int, path: str = "/") -> str:
        return f"http://{host_name(site)}:{self.port}{path}"

    def stop(self) -> Deferred[None]:
        return cast("Deferred[None]", self._port.stopListening())

    def _site_of(self, request: _WebRequest) -> int | None:
        host = request.getRequestHostname().decode("ascii", "replace").lower()
        name = host.removesuffix(HOST_SUFFIX)
        if name == host or not name.startswith("site"):
            return None
        try:
            site = int(name[4:])
        except ValueError:
            return None
        return site if 0 <= site < self.plan.sites else None

    def _page(self, site: int) -> bytes:
        # Every page of a site shows the same links (all of its pages).
        body = self._bodies.get(site)
        if body is None:
            links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in self.plan.paths(site))
            body = f"<html><body><h1>{host_name(site)}</h1><ul>{links}</ul></body></html>".encode()
            self._bodies[site] = body
        return body

    def render_GET(self, raw: object) -> bytes | int:
        request = cast("_WebRequest", raw)
        site = self._site_of(request)
        if site is None:
            request.setResponseCode(404)
            return b"no such site"
        if request.path == b"/robots.txt":
            self.robots_requests += 1
            self.robots_by_site[site] += 1
            request.setHeader("Content-Type", "text/plain")
            if site in self.plan.hang:
                return NOT_DONE_YET
            if site in self.plan.slow:
                self._answer_later(request, self.plan.slow_delay, ROBOTS_DISALLOW)
                return NOT_DONE_YET
            return ROBOTS_DISALLOW
        self.page_requests += 1
        request.setHeader("Content-Type", "text/html; charset=utf-8")
        return self._page(site)

    def _answer_later(self, request: _WebRequest, delay: float, body: bytes) -> None:
        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def answer() -> None:
            if not gone:
                request.write(body)
                request.finish()

        self._reactor.callLater(delay, answer)


@implementer(IResolverSimple)
class LoopbackResolver:
    """A ``TWISTED_DNS_RESOLVER`` that sends every host name to 127.0.0.1."""

    def __init__(self, reactor: ReactorBase) -> None:
        self.reactor = reactor

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: ReactorBase) -> LoopbackResolver:
        return cls(reactor)

    def install_on_reactor(self) -> None:
        self.reactor.installResolver(cast("IResolverSimple", self))

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        return defer.succeed("127.0.0.1")
