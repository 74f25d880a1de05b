"""The one site server of the benchmarks: many host names on one local port.

A Twisted web server on 127.0.0.1 (:class:`HostServer`) answers for every
host name and lets a function of (host, path) say what to send, when, or
never. ``LoopbackResolver`` (a ``TWISTED_DNS_RESOLVER``) sends every name to
127.0.0.1, so a crawl can use thousands of host names without real DNS.

:class:`SitesServer` plays a :class:`SitePlan`: ``site<i>.bench`` is site
``i``, with ``pages`` pages that all link to each other (the home page ``/``
and ``/page/<k>``; the disallowed ones, if any, are ``/private/<k>``) and a
robots.txt saying ``Disallow: /private/`` that answers at once, late or
never, as the plan says. The server runs in the crawler's process
(``crawl.py``, ``waiting.py``) or in a process of its own
(:func:`sites_process`, for ``fleet.py`` and ``cpu_per_page.py``: then the
crawler's CPU time is the crawler's alone); ``python -m benchmarks.sites
--sites N --pages P`` is that process.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, cast

from twisted.internet import defer
from twisted.internet.interfaces import IResolverSimple
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site
from zope.interface import implementer  # type: ignore[import-untyped]

from benchmarks._common import REPO_ROOT, module_command

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
    ``/private/`` (never the home page). Every other answer, robots.txt and
    pages, comes after ``latency`` seconds (0: at once), as across a network.
    """

    sites: int
    pages: int
    slow: frozenset[int] = frozenset()
    hang: frozenset[int] = frozenset()
    slow_delay: float = 10.0
    disallowed: tuple[int, ...] = field(default=())
    latency: float = 0.0

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
        latency: float = 0.0,
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
        return cls(sites, pages, slow, hang, slow_delay, disallowed, latency)

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


CONNECTIONS_PATH = "/_bench/connections"
"""Answered on any host name with how many connections the server has accepted so far."""


class _QuietSite(Site):
    """A ``Site`` without the access log, counting the connections it accepts."""

    noisy = False
    connections = 0

    def buildProtocol(self, addr: object) -> Any:
        self.connections += 1
        return super().buildProtocol(addr)  # type: ignore[no-untyped-call]

    def log(self, request: http.Request) -> None:
        pass


@dataclass(frozen=True)
class Answer:
    """What the server sends for one request: ``body`` after ``after`` seconds (``None``: never)."""

    body: bytes
    content_type: str = "text/html; charset=utf-8"
    after: float | None = 0.0


Answering = Callable[[str, str], "Answer | None"]
"""(host name, path) -> what to send; ``None`` is a 404."""


class HostServer(Resource):
    """Answers every host name on one port of 127.0.0.1 (port 0), as ``answer`` says.

    It counts robots.txt and page requests (robots.txt per host) and, with
    ``arrivals``, notes (monotonic time, host, path) of every request.
    """

    isLeaf = True

    def __init__(self, answer: Answering, *, arrivals: bool = False) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._answer = answer
        self.robots_requests = 0
        self.robots_by_host: Counter[str] = Counter()
        self.page_requests = 0
        self.arrivals: list[tuple[float, str, str]] | None = [] if arrivals else None
        self._reactor = get_reactor()
        self._site = site = _QuietSite(self)  # type: ignore[no-untyped-call]
        self._port = self._reactor.listenTCP(  # type: ignore[no-untyped-call]
            0, site, interface="127.0.0.1"
        )
        self.port: int = self._port.getHost().port

    def url_for(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    def stop(self) -> Deferred[None]:
        return cast("Deferred[None]", self._port.stopListening())

    def render_GET(self, raw: object) -> bytes | int:
        request = cast("_WebRequest", raw)
        host = request.getRequestHostname().decode("ascii", "replace").lower()
        path = request.path.decode("ascii", "replace")
        if path == CONNECTIONS_PATH:
            return str(self._site.connections).encode()
        if self.arrivals is not None:
            self.arrivals.append((time.monotonic(), host, path))
        answer = self._answer(host, path)
        if answer is None:
            request.setResponseCode(404)
            return b"no such site"
        if path == "/robots.txt":
            self.robots_requests += 1
            self.robots_by_host[host] += 1
        else:
            self.page_requests += 1
        request.setHeader("Content-Type", answer.content_type)
        if answer.after is None:
            return NOT_DONE_YET
        if answer.after > 0:
            self._answer_later(request, answer.after, answer.body)
            return NOT_DONE_YET
        return answer.body

    def _answer_later(self, request: _WebRequest, delay: float, body: bytes) -> None:
        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def answer() -> None:
            if not gone:
                request.write(body)
                request.finish()

        self._reactor.callLater(delay, answer)


def site_of(plan: SitePlan, host: str) -> int | None:
    """The plan's site number of a host name (``site<i>.bench``), or ``None``."""
    name = host.removesuffix(HOST_SUFFIX)
    if name == host or not name.startswith("site"):
        return None
    try:
        site = int(name[4:])
    except ValueError:
        return None
    return site if 0 <= site < plan.sites else None


class SitesServer(HostServer):
    """Plays a :class:`SitePlan`; ``url(site, path)`` builds URLs."""

    def __init__(self, plan: SitePlan) -> None:
        self.plan = plan
        self._bodies: dict[int, bytes] = {}
        super().__init__(self._plan_answer)

    def url(self, site: int, path: str = "/") -> str:
        return self.url_for(host_name(site), path)

    def _plan_answer(self, host: str, path: str) -> Answer | None:
        site = site_of(self.plan, host)
        if site is None:
            return None
        if path == "/robots.txt":
            after: float | None = self.plan.latency
            if site in self.plan.hang:
                after = None
            elif site in self.plan.slow:
                after = self.plan.slow_delay
            return Answer(ROBOTS_DISALLOW, "text/plain", after)
        return Answer(self._page(site), after=self.plan.latency)

    def _page(self, site: int) -> bytes:
        # Every page of a site shows the same links (all of its pages).
        body = self._bodies.get(site)
        if body is None:
            links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in self.plan.paths(site))
            body = f"<html><body><h1>{host_name(site)}</h1><ul>{links}</ul></body></html>".encode()
            self._bodies[site] = body
        return body


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


# --------------------------------------------------------------------------
# The server in a process of its own
# --------------------------------------------------------------------------


class ServerError(RuntimeError):
    """The sites server process did not start or stop as it should (the message says why)."""


def serve(sites: int, pages: int, latency: float = 0.0) -> dict[str, Any]:
    """Play ``SitePlan.build(sites, pages, latency=latency)`` until SIGTERM; what was asked."""
    server = SitesServer(SitePlan.build(sites, pages, latency=latency))
    print(json.dumps({"port": server.port}), flush=True)
    get_reactor().run()  # Twisted stops the reactor on SIGTERM
    by_host = server.robots_by_host
    return {
        "robots_requests": server.robots_requests,
        "page_requests": server.page_requests,
        "origins_fetched": len(by_host),
        "most_fetches_per_origin": max(by_host.values(), default=0),
    }


def log_tail(path: Path, lines: int = 15) -> str:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return "\n".join(text.strip().splitlines()[-lines:])


@dataclass
class SitesProcess:
    """A sites server in a child process; :meth:`finish` stops it and says what it served."""

    port: int
    proc: subprocess.Popen[str]
    log: Path

    def finish(self) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise ServerError("the sites server did not stop on SIGTERM") from None
        assert self.proc.stdout is not None
        lines = self.proc.stdout.read().strip().splitlines()
        if self.proc.returncode != 0 or not lines:
            raise ServerError(
                f"sites server: exit status {self.proc.returncode}\n" + log_tail(self.log)
            )
        served: dict[str, Any] = json.loads(lines[-1])
        return served


@contextmanager
def sites_process(
    sites: int, pages: int, log: Path, *, latency: float = 0.0
) -> Iterator[SitesProcess]:
    """Start the sites server for ``sites`` x ``pages`` (stderr to ``log``); kill it on exit.

    ``latency``: seconds before every answer (see :class:`SitePlan`).
    """
    with log.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            module_command(
                __file__, f"--sites={sites}", f"--pages={pages}", f"--latency={latency}"
            ),
            cwd=REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=cast("IO[str]", err),
            text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line:
                proc.wait()
                raise ServerError(
                    f"the sites server exited with status {proc.returncode} before it was ready\n"
                    + log_tail(log)
                )
            yield SitesProcess(int(json.loads(line)["port"]), proc, log)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve sites on 127.0.0.1 until SIGTERM.")
    parser.add_argument("--sites", type=int, required=True)
    parser.add_argument("--pages", type=int, required=True)
    parser.add_argument(
        "--latency", type=float, default=0.0, help="seconds before every answer (default 0)"
    )
    args = parser.parse_args()
    print(json.dumps(serve(args.sites, args.pages, args.latency)), flush=True)


if __name__ == "__main__":
    main()
