"""One in-process HTTP server that plays many sites, for real-crawl tests.

robots.txt fetching is about how a crawler reacts to servers that answer
late, badly or not at all, and about one robots.txt per origin. So one
Twisted web server on 127.0.0.1 answers for every host name, chooses the
site by the ``Host`` header, and lets each test script what each site's
robots.txt does, fetch after fetch. ``LoopbackResolver`` sends every name
to that server, so test URLs can use as many host names as they like.
"""

from __future__ import annotations

import gzip
import html
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

from twisted.internet import defer
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolverSimple
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site
from zope.interface import implementer  # type: ignore[import-untyped]

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.base import DelayedCall, ReactorBase
    from twisted.internet.defer import Deferred
    from twisted.internet.posixbase import PosixReactorBase
    from twisted.internet.tcp import Port
    from twisted.web import http
    from twisted.web.http_headers import Headers


def get_reactor() -> PosixReactorBase:
    """The installed reactor, imported late so importing this module never installs one."""
    from twisted.internet import reactor

    return cast("PosixReactorBase", reactor)


@dataclass(frozen=True)
class Reply:
    """One scripted answer to a robots.txt fetch.

    ``delay`` answers that many seconds late; ``hang`` never answers;
    ``reset`` sends the headers (announcing the full length) and half the
    body, then closes the connection; ``gzip`` sends the body with
    ``Content-Encoding: gzip``; ``redirect_to`` becomes the ``Location``
    header of a 3xx reply. ``header_lines`` are sent after ``headers``, one
    line each, so a name may repeat (several ``X-Robots-Tag`` headers).
    ``chunk`` sends the body (as sent: gzipped if so) that many bytes at a
    time, each once the connection took the one before, until the client
    closes it: ``MockServer.sent`` counts the bytes that went.
    """

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False
    redirect_to: str | None = None
    reset: bool = False
    gzip: bool = False
    header_lines: tuple[tuple[str, str], ...] = ()
    chunk: int = 0

    def __post_init__(self) -> None:
        if self.redirect_to is not None and not 300 <= self.status < 400:
            raise ValueError(f"redirect_to needs a 3xx status, not {self.status}")


NO_ROBOTS = Reply(404, b"Not Found")
"""What a site answers for robots.txt until ``set_robots`` says otherwise."""


class RequestRecord(NamedTuple):
    """One request as the server received it; ``time`` is ``time.monotonic()``."""

    host: str
    path: str
    time: float
    user_agent: str


@dataclass
class _SiteConfig:
    robots: tuple[Reply, ...] = (NO_ROBOTS,)
    robots_fetches: int = 0
    links: tuple[str, ...] = ()
    delays: Mapping[str, float] = field(default_factory=dict)
    scripted: dict[str, list[Reply]] = field(default_factory=dict)
    """Per path (with query), the replies still to give; the last one repeats."""

    def next_robots(self) -> Reply:
        """Consume the scripted replies in order; the last one repeats."""
        reply = self.robots[min(self.robots_fetches, len(self.robots) - 1)]
        self.robots_fetches += 1
        return reply

    def page(self, host: str, path: str) -> Reply:
        replies = self.scripted.get(path)
        if replies:
            return replies.pop(0) if len(replies) > 1 else replies[0]
        anchors = "".join(
            f'<li><a href="{html.escape(link)}">{html.escape(link)}</a></li>' for link in self.links
        )
        body = f"<html><body><h1>{html.escape(host + path)}</h1><ul>{anchors}</ul></body></html>"
        return Reply(
            body=body.encode(),
            headers={"Content-Type": "text/html; charset=utf-8"},
            delay=self.delays.get(path, 0.0),
        )


class _ChunkProducer:
    """Writes a body ``size`` bytes at a time, as the connection asks (a pull producer)."""

    def __init__(self, request: _WebRequest, body: bytes, size: int, sent: list[int]) -> None:
        self.request = request
        self.body = body
        self.size = size
        self.sent = sent
        self.stopped = False
        request.notifyFinish().addErrback(lambda _: self.stopProducing())

    def resumeProducing(self) -> None:
        if self.stopped:
            return
        start = self.sent[0]
        if start >= len(self.body):
            self.stopped = True
            self.request.unregisterProducer()
            self.request.finish()
            return
        piece = self.body[start : start + self.size]
        self.sent[0] += len(piece)
        self.request.write(piece)

    def stopProducing(self) -> None:
        self.stopped = True


class _Transport(Protocol):
    def loseConnection(self) -> None: ...
    def abortConnection(self) -> None: ...


class _WebRequest(Protocol):
    """What the server uses of ``twisted.web.server.Request``, typed (Twisted's is not)."""

    uri: bytes
    path: bytes
    transport: _Transport
    responseHeaders: Headers

    def getRequestHostname(self) -> bytes: ...
    def registerProducer(self, producer: object, streaming: bool) -> None: ...
    def unregisterProducer(self) -> None: ...
    def getHeader(self, key: bytes) -> bytes | None: ...
    def setResponseCode(self, code: int) -> None: ...
    def setHeader(self, name: str, value: str) -> None: ...
    def write(self, data: bytes) -> None: ...
    def finish(self) -> None: ...
    def notifyFinish(self) -> Deferred[None]: ...


class _QuietSite(Site):
    """A ``Site`` without the access log: ``MockServer.requests`` is the log."""

    noisy = False

    def log(self, request: http.Request) -> None:
        pass


class Sites:
    """What every mock server keeps and is told: the sites' scripts and the requests received.

    ``MockServer`` (Twisted, in the test's reactor) and
    ``tests.helpers.asyncio_mockserver.AsyncioMockServer`` (asyncio, for a
    crawl without a reactor) share it, so a test reads the same whichever
    serves it. A server gives ``port`` and ``_answer`` (a held request, now).
    """

    port: int

    def __init__(self) -> None:
        self.requests: list[RequestRecord] = []
        self.listeners: list[Callable[[RequestRecord], None]] = []
        """Called with each request as it arrives, before it is answered."""
        self._sites: defaultdict[str, _SiteConfig] = defaultdict(_SiteConfig)
        self._held_at: dict[object, tuple[str, str]] = {}
        self._sent: defaultdict[tuple[str, str], list[int]] = defaultdict(lambda: [0])
        """Body bytes written per (host, path) by replies sent in ``chunk`` pieces."""

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    def set_robots(self, host: str, *replies: Reply) -> None:
        """Script the robots.txt fetches of ``host`` from now on; no replies means 404."""
        site = self._sites[host.lower()]
        site.robots = replies or (NO_ROBOTS,)
        site.robots_fetches = 0

    def set_pages(
        self, host: str, links: Sequence[str] = (), delays: Mapping[str, float] | None = None
    ) -> None:
        """Every page of ``host`` lists ``links``; ``delays`` maps path (with query) to seconds."""
        site = self._sites[host.lower()]
        site.links = tuple(links)
        site.delays = dict(delays or {})

    def set_page(self, host: str, path: str, *replies: Reply) -> None:
        """Script the answers to ``path`` (with its query) of ``host``; the last one repeats."""
        self._sites[host.lower()].scripted[path] = list(replies)

    def release(self, host: str, reply: Reply | None = None, *, path: str = "/robots.txt") -> int:
        """Answer the held (``hang``) requests for ``path`` of ``host`` now; how many there were.

        With ``Reply(hang=True)`` first, a test decides when a fetch ends: once
        the crawl (or every crawler of a fleet) reached the state it wants.
        ``reply`` answers them, and every later robots.txt fetch too; without
        it, each gets the site's next scripted answer.
        """
        host = host.lower()
        held = [r for r, at in list(self._held_at.items()) if at == (host, path)]
        site = self._sites[host]
        if reply is not None and path == "/robots.txt":
            self.set_robots(host, reply)
        for request in held:
            answer = reply
            if answer is None:
                answer = site.next_robots() if path == "/robots.txt" else site.page(host, path)
            self._held_at.pop(request, None)
            self._answer(request, answer)
        return len(held)

    def holding(self, host: str, path: str = "/robots.txt") -> int:
        """How many requests for ``path`` of ``host`` are held unanswered (``hang``) now."""
        return sum(1 for held in self._held_at.values() if held == (host.lower(), path))

    def requests_for(self, host: str, path: str | None = None) -> list[RequestRecord]:
        """The requests ``host`` received, in order; ``path`` (with its query) filters."""
        host = host.lower()
        return [r for r in self.requests if r.host == host and (path is None or r.path == path)]

    def sent(self, host: str, path: str = "/robots.txt") -> int:
        """Body bytes written for ``path`` of ``host`` by replies sent in ``chunk`` pieces."""
        return self._sent[(host.lower(), path)][0]

    def _received(self, host: str, target: bytes, user_agent: str) -> tuple[str, Reply]:
        """Record a request, tell the listeners, and choose its reply: its path and the reply."""
        host = host.lower()
        path = _origin_form(target).decode("ascii", "replace")
        record = RequestRecord(host, path, time.monotonic(), user_agent)
        self.requests.append(record)
        for listener in list(self.listeners):
            listener(record)
        site = self._sites[host]
        robots = path.partition("?")[0] == "/robots.txt"
        return path, site.next_robots() if robots else site.page(host, path)

    def _answer(self, request: object, reply: Reply) -> None:
        raise NotImplementedError


class MockServer(Sites, Resource):
    """Many sites on one port of 127.0.0.1, chosen by the ``Host`` header.

    Listens as soon as it is built, in the running test's reactor. A host
    that was never configured answers robots.txt with 404 and every other
    path with a small HTML page without links.
    """

    isLeaf = True

    def __init__(self) -> None:
        Sites.__init__(self)
        Resource.__init__(self)  # type: ignore[no-untyped-call]
        self._reactor = get_reactor()
        self._pending: dict[_WebRequest, DelayedCall | None] = {}
        site = _QuietSite(self)  # type: ignore[no-untyped-call]
        self._port: Port = self._reactor.listenTCP(  # type: ignore[no-untyped-call]
            0, site, interface="127.0.0.1"
        )
        self.port = self._port.getHost().port

    def stop(self) -> Deferred[None]:
        """Drop unanswered requests (hung or delayed), then stop listening."""
        for request, call in list(self._pending.items()):
            if call is not None and call.active():
                call.cancel()
            request.transport.abortConnection()
        self._pending.clear()
        return defer.maybeDeferred(self._port.stopListening)

    def render(self, request: _WebRequest) -> int:
        host = request.getRequestHostname().decode("ascii", "replace")
        user_agent = (request.getHeader(b"user-agent") or b"").decode("latin-1")
        path, reply = self._received(host, request.uri, user_agent)

        if reply.hang:
            self._held_at[request] = (host.lower(), path)
            self._hold(request, None)
        elif reply.delay:
            self._hold(request, self._reactor.callLater(reply.delay, self._answer, request, reply))
        else:
            self._answer(request, reply)
        return NOT_DONE_YET

    def _hold(self, request: _WebRequest, call: DelayedCall | None) -> None:
        """Keep an unanswered request until it is answered, or the client gives up (timeout)."""
        self._pending[request] = call
        request.notifyFinish().addBoth(lambda _: self._forget(request))

    def _forget(self, request: _WebRequest) -> None:
        self._held_at.pop(request, None)
        call = self._pending.pop(request, None)
        if call is not None and call.active():
            call.cancel()

    def _answer(self, request: object, reply: Reply) -> None:
        request = cast("_WebRequest", request)
        self._pending.pop(request, None)
        self._held_at.pop(request, None)
        body = gzip.compress(reply.body) if reply.gzip else reply.body
        request.setResponseCode(reply.status)
        request.setHeader("Content-Type", "text/plain")
        if reply.gzip:
            request.setHeader("Content-Encoding", "gzip")
        if reply.redirect_to is not None:
            request.setHeader("Location", reply.redirect_to)
        for name, value in reply.headers.items():
            request.setHeader(name, value)
        for name, value in reply.header_lines:
            request.responseHeaders.addRawHeader(name, value)
        request.setHeader("Content-Length", str(len(body)))
        if reply.reset:
            request.write(body[: len(body) // 2])
            # loseConnection, not abortConnection: the half body must reach the client.
            request.transport.loseConnection()
            return
        if reply.chunk:
            host = request.getRequestHostname().decode("ascii", "replace").lower()
            sent = self._sent[(host, request.uri.decode("ascii", "replace"))]
            sent[0] = 0
            producer = _ChunkProducer(request, body, reply.chunk, sent)
            request.registerProducer(producer, False)
            return
        request.write(body)
        request.finish()


@implementer(IResolverSimple)
class LoopbackResolver:
    """A ``TWISTED_DNS_RESOLVER`` that sends every host name to 127.0.0.1.

    Names under ``.invalid`` (RFC 6761: never resolvable) fail with
    ``DNSLookupError``, so tests can simulate an unresolvable host without
    touching real DNS.
    """

    def __init__(self, reactor: ReactorBase) -> None:
        self.reactor = reactor

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: ReactorBase) -> LoopbackResolver:
        return cls(reactor)

    def install_on_reactor(self) -> None:
        self.reactor.installResolver(cast("IResolverSimple", self))

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        if name.lower().rstrip(".").rpartition(".")[2] == "invalid":
            return defer.fail(DNSLookupError(f"{name!r} is under .invalid"))
        return defer.succeed("127.0.0.1")


def _origin_form(target: bytes) -> bytes:
    """A request target as a server reads it: ``/path?query``.

    A client sends a proxy the absolute form (``http://host/path``, RFC 9112
    3.2.2): the server answers as a proxy to its own sites too, so that a
    crawl reaches a URL on the default port (``meta["proxy"]``, see
    :func:`tests.helpers.crawling.through_proxy`).
    """
    if target[:1] == b"/":
        return target
    return b"/" + target.partition(b"://")[2].partition(b"/")[2]


def install_loopback_dns() -> None:
    """Make the running reactor resolve every name with ``LoopbackResolver``.

    Scrapy's ``CrawlerRunner`` never installs ``TWISTED_DNS_RESOLVER`` (only
    ``CrawlerProcess`` does), so in-process crawls call this. It stays
    installed for the session: tests must never reach real DNS.
    """
    reactor = get_reactor()
    if not isinstance(reactor.resolver, LoopbackResolver):
        LoopbackResolver(reactor).install_on_reactor()
