"""Run real Scrapy crawls, in the test's own reactor or loop, and collect what happened.

The crawl tests run in one of Scrapy's three modes, chosen for the session:

- ``pytest --reactor=asyncio`` (the default) or ``--reactor=default``:
  pytest-twisted installs that reactor and runs it; a crawl is a
  ``CrawlerRunner`` crawl in it, every host name resolved to the
  ``MockServer`` (see ``LoopbackResolver``);
- ``pytest -p no:twisted``: no reactor at all (``TWISTED_REACTOR_ENABLED =
  False``): the tests run in one asyncio loop of the session, a crawl is an
  ``AsyncCrawlerRunner`` crawl in it, and the server is the
  ``AsyncioMockServer`` in that loop, every request sent to it as a proxy.

The helpers here (``async_test``, ``run_spider``, ``fetch``, ``when``,
``until``, ``call_later``) work alike in the three, so a test is written once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import warnings
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, cast

import pytest
import pytest_twisted  # type: ignore[import-untyped]
import scrapy.exceptions
from scrapy import Spider
from scrapy.crawler import Crawler, CrawlerRunner
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.reactor import is_asyncio_reactor_installed
from twisted.internet.defer import Deferred, race
from twisted.internet.interfaces import IReactorTime
from twisted.web.client import Agent, readBody

from scrapy_robotrules.crawl.config.values import RobotRulesSettingError
from tests.helpers.mockserver import (
    MockServer,
    RequestRecord,
    Sites,
    get_reactor,
    install_loopback_dns,
)
from tests.helpers.recording_spider import RecordingSpider as RecordingSpider  # noqa: PLC0414 (re-exported)

if TYPE_CHECKING:
    from scrapy.crawler import AsyncCrawlerRunner

P = ParamSpec("P")

BASE_SETTINGS: dict[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "REMOTE_CONTROL_ENABLED": False,
    # An http_proxy in the environment must not capture the test traffic.
    "HTTPPROXY_ENABLED": False,
}
"""Settings under every test crawl; a test's own settings override them."""

SCRAPY_VERSION = tuple(int(part) for part in scrapy.__version__.split(".")[:2])
"""The installed Scrapy's (major, minor): some tests check what only some versions have."""

_TWISTED_ERRORS = {
    "CannotResolveHostError": "twisted.internet.error.DNSLookupError",
    "DownloadTimeoutError": "twisted.internet.error.TimeoutError",
    "ResponseDataLossError": "twisted.web._newclient.ResponseFailed",
    "DownloadFailedError": "twisted.web._newclient.ResponseNeverReceived",
}
"""Scrapy 2.14+'s download errors, by the Twisted error Scrapy 2.13 raised instead."""


def download_error(name: str) -> type[Exception]:
    """The class the installed Scrapy raises for the download error ``name`` (2.14+'s name)."""
    found = getattr(scrapy.exceptions, name, None)
    if found is None:  # Scrapy 2.13
        module, _, attribute = _TWISTED_ERRORS[name].rpartition(".")
        found = getattr(import_module(module), attribute)
    return cast("type[Exception]", found)


def error_path(name: str) -> str:
    """``download_error(name)`` as Scrapy's ``exception_type_count`` stats name it."""
    error = download_error(name)
    return f"{error.__module__}.{error.__qualname__}"


CRAWL_TIMEOUT = 60.0
"""Seconds after which ``run_spider`` fails the test instead of hanging the suite."""


def reactorless() -> bool:
    """Whether this run has no Twisted reactor (``pytest -p no:twisted``): Scrapy's third mode."""
    return "twisted.internet.reactor" not in sys.modules


def reactor_settings() -> dict[str, Any]:
    """Settings that match the run's mode (Scrapy refuses a mismatch)."""
    if reactorless():
        return {"TWISTED_REACTOR_ENABLED": False}
    return {} if is_asyncio_reactor_installed() else {"TWISTED_REACTOR": None}


ONE_POOL = (
    "Scrapy's reactorless download handler (aiohttp) caps its connections at"
    " CONCURRENT_REQUESTS: a robots.txt fetch waits for a connection while held"
    " requests fill every download place"
)
"""Why a test that holds every download place open does not apply without a reactor."""

NO_RESOLVER = (
    "without a resolver to bend, a named host reaches the test server only through it as"
    " a proxy: a request sent without one, or to a port nothing listens on, cannot be staged"
)
"""Why a test of what a named host's connection does (refused, direct) does not apply."""

USERINFO = (
    "Scrapy's reactorless download handler (aiohttp) downloads a URL with a user name and"
    " password in it, which Twisted's refuses"
)
"""Why a test that counts on Twisted's refusal of such a URL does not apply."""

TLS_ERRORS = (
    "Scrapy's reactorless download handler (aiohttp) reports a failed TLS handshake as"
    " DownloadConnectionRefusedError, not as Twisted's handler does"
)
"""Why a test of the exceptions a TLS failure is counted under does not apply."""

MANY_HEADERS = (
    "Scrapy's reactorless download handler (aiohttp) refuses a response of more than"
    " 128 header lines (aiohttp's own limit)"
)
"""Why a test of a response with hundreds of header lines does not apply."""

TWISTED_ONLY = "tests Twisted's own machinery (the reactor, its resolver, its web server)"
"""Why a test of the Twisted test harness itself does not apply without a reactor."""


def not_reactorless(reason: str) -> pytest.MarkDecorator:
    """Skip a test in a run without a reactor, for ``reason`` (listed in the docs)."""
    return pytest.mark.skipif(reactorless(), reason=f"without a reactor: {reason}")


_loop: list[asyncio.AbstractEventLoop] = []


def session_loop() -> asyncio.AbstractEventLoop:
    """The asyncio loop of a run without a reactor: the tests run in it, one after another.

    As pytest-twisted runs the reactor only while a test runs, this loop
    runs only while a test (or a fixture's start or stop) runs.
    """
    if not _loop:
        _loop.append(asyncio.new_event_loop())
        asyncio.set_event_loop(_loop[0])
    return _loop[0]


def async_test(
    test: Callable[P, Coroutine[Any, Any, None]],
) -> Callable[P, Deferred[None]]:
    """Mark an ``async def`` test to run in the reactor, or in the loop without one."""
    if not reactorless():
        return cast("Callable[P, Deferred[None]]", pytest_twisted.ensureDeferred(test))

    @functools.wraps(test)
    def in_loop(*args: P.args, **kwargs: P.kwargs) -> None:
        session_loop().run_until_complete(test(*args, **kwargs))

    return cast("Callable[P, Deferred[None]]", in_loop)


_serving: list[Sites] = []
"""The mock server of the running test, which a crawl without a reactor uses as its proxy."""


@pytest.fixture(name="mockserver")
def mockserver_fixture() -> Iterator[MockServer]:
    """A fresh mock server per test; import this into a test module or conftest.

    A ``MockServer`` in the reactor; without one, an ``AsyncioMockServer``
    in the session's loop (the same methods, the same records).
    """
    if not reactorless():
        server = MockServer()
        yield server
        pytest_twisted.blockon(server.stop())
        return
    from tests.helpers.asyncio_mockserver import AsyncioMockServer

    loop = session_loop()
    served = loop.run_until_complete(AsyncioMockServer.start())
    _serving.append(served)
    try:
        yield cast("MockServer", served)
    finally:
        _serving.remove(served)
        loop.run_until_complete(served.stop())


def call_later(delay: float, call: Callable[..., object], *args: Any, **kwargs: Any) -> None:
    """Call ``call(*args, **kwargs)`` ``delay`` seconds from now, in the reactor or the loop."""
    if reactorless():
        asyncio.get_running_loop().call_later(delay, functools.partial(call, *args, **kwargs))
    else:
        get_reactor().callLater(delay, call, *args, **kwargs)


SpiderT = TypeVar("SpiderT", bound=RecordingSpider)


def with_custom_settings(settings: dict[str, Any], spider: type[SpiderT]) -> type[SpiderT]:
    """``spider`` with ``settings`` as its ``custom_settings``: checked as its crawl starts.

    Project settings with a bad ``ROBOTRULES_*`` value end the program when
    the runner is built (the add-on's check); a spider's are what reach the crawl.
    """
    return cast(
        "type[SpiderT]", type(spider.__name__, (spider,), {"custom_settings": dict(settings)})
    )


class ThroughProxy:
    """A downloader middleware: every request is sent to the proxy ``TESTS_PROXY`` names.

    The mock server answers as a proxy to its own sites (absolute-form
    request targets), so a URL on the default port (``http://a.test/``, the
    origin ``http://a.test``) reaches it: see :func:`through_proxy`.
    """

    def __init__(self, proxy: str) -> None:
        self.proxy = proxy

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ThroughProxy:
        return cls(crawler.settings["TESTS_PROXY"])

    def process_request(self, request: Any, spider: Any = None) -> None:
        if _host_of(request.url).rpartition(".")[2] != "invalid":
            request.meta.setdefault("proxy", self.proxy)


def _host_of(url: str) -> str:
    from urllib.parse import urlsplit

    return (urlsplit(url).hostname or "").rstrip(".")


def through_proxy(mockserver: MockServer | Sites) -> dict[str, Any]:
    """Settings under which every request (robots.txt too) reaches ``mockserver`` as a proxy."""
    return {
        "HTTPPROXY_ENABLED": True,
        "TESTS_PROXY": f"http://127.0.0.1:{mockserver.port}",
        "DOWNLOADER_MIDDLEWARES": {f"{ThroughProxy.__module__}.ThroughProxy": 700},
    }


@dataclass
class CrawlResult(Generic[SpiderT]):
    """Everything a test may want to assert on after a crawl."""

    spider: SpiderT
    crawler: Crawler
    stats: dict[str, Any]
    records: list[logging.LogRecord] = field(repr=False)

    @property
    def crawled(self) -> list[str]:
        return self.spider.crawled

    @property
    def failures(self) -> list[tuple[str, BaseException]]:
        return self.spider.failures

    @property
    def ignored(self) -> list[str]:
        """URLs dropped with ``IgnoreRequest`` (robots.txt middlewares raise it)."""
        return [url for url, exc in self.failures if isinstance(exc, IgnoreRequest)]

    @property
    def dropped(self) -> list[str]:
        return self.spider.dropped

    def messages(self, text: str = "", level: int = logging.NOTSET) -> list[str]:
        """Logged messages that contain ``text``, at ``level`` or above."""
        found = (r.getMessage() for r in self.records if r.levelno >= level)
        return [message for message in found if text in message]


class _RecordsHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def run_spider(
    spider_cls: type[SpiderT],
    settings: Mapping[str, Any] | None = None,
    *,
    crawl_timeout: float = CRAWL_TIMEOUT,
    **spider_kwargs: Any,
) -> CrawlResult[SpiderT]:
    """Crawl with ``spider_cls`` in the running reactor until the spider closes.

    Every log record at DEBUG and above, from any logger, is kept for the
    duration of the crawl. A crawl still running after ``crawl_timeout``
    seconds is cancelled and fails the test: ``CLOSESPIDER_TIMEOUT`` would
    not do, since closing waits for requests in progress (a held request,
    a hung download).
    """
    runner = crawler_runner(settings or {})
    crawler = runner.create_crawler(spider_cls)
    handler = _RecordsHandler()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        if not isinstance(runner, CrawlerRunner):  # an AsyncCrawlerRunner, without a reactor
            # Not wait_for: the crawl may take its cancellation for a stop and end well.
            crawl = asyncio.ensure_future(runner.crawl(crawler, **spider_kwargs))
            done, _ = await asyncio.wait({crawl}, timeout=crawl_timeout)
            if not done:
                crawl.cancel()
                raise AssertionError(f"the crawl was still running after {crawl_timeout} s")
            await crawl
        else:
            reactor = get_reactor()
            alarm: Deferred[None] = Deferred(lambda _: timer.cancel())
            timer = reactor.callLater(crawl_timeout, alarm.callback, None)
            winner, _ = await race([runner.crawl(crawler, **spider_kwargs), alarm])
            if winner == 1:
                raise AssertionError(f"the crawl was still running after {crawl_timeout} s")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    spider = cast("SpiderT", crawler.spider)
    return CrawlResult(spider, crawler, crawler.stats.get_stats(), handler.records)


def crawler_runner(settings: Mapping[str, Any]) -> CrawlerRunner | AsyncCrawlerRunner:
    """The runner of a test crawl in the run's mode, with ``BASE_SETTINGS`` under ``settings``.

    In a reactor, a ``CrawlerRunner`` with every name resolved to the mock
    server; without one, an ``AsyncCrawlerRunner`` sending every request to
    the running test's mock server as a proxy (:func:`through_proxy`).
    """
    merged = {**BASE_SETTINGS, **reactor_settings(), **settings}
    if not reactorless():
        install_loopback_dns()
        return CrawlerRunner(merged)
    if _serving:
        proxied = through_proxy(_serving[-1])
        middlewares = {
            **proxied["DOWNLOADER_MIDDLEWARES"],
            **merged.get("DOWNLOADER_MIDDLEWARES", {}),
        }
        merged = {**merged, **proxied, "DOWNLOADER_MIDDLEWARES": middlewares}
    # Late: Scrapy before 2.15 has no AsyncCrawlerRunner (the suite still runs
    # on its oldest supported Scrapy, under a reactor).
    from scrapy.crawler import AsyncCrawlerRunner

    return AsyncCrawlerRunner(merged)


async def refused_crawl(
    spider_cls: type[Spider], settings: Mapping[str, Any], match: str, **spider_kwargs: Any
) -> RobotRulesSettingError:
    """Start a crawl that a bad value must stop: the error it stopped with (matching ``match``).

    Checks it stopped before any download.
    """
    runner = crawler_runner(settings)
    crawler = runner.create_crawler(spider_cls)
    with pytest.raises(RobotRulesSettingError, match=match) as raised:
        await runner.crawl(crawler, **spider_kwargs)
    assert not crawler.stats.get_value("downloader/request_count")
    return raised.value


@dataclass(frozen=True)
class Fetched:
    """A plain HTTP response; ``headers`` maps lower-case names to their last value."""

    status: int
    headers: dict[str, str]
    body: bytes


async def fetch(url: str) -> Fetched:
    """One plain HTTP GET, without Scrapy, to see exactly what the server sends."""
    if reactorless():
        return await _fetch_in_loop(url)
    install_loopback_dns()
    agent = Agent(get_reactor())  # type: ignore[no-untyped-call]
    response = await agent.request(b"GET", url.encode())
    with warnings.catch_warnings():
        # Twisted's readBody warns about the transport of Twisted's own Agent.
        warnings.simplefilter("ignore", DeprecationWarning)
        reading = readBody(response)
    body = await reading
    headers = {
        name.decode().lower(): values[-1].decode()
        for name, values in response.headers.getAllRawHeaders()
    }
    return Fetched(response.code, headers, body)


async def _fetch_in_loop(url: str) -> Fetched:
    """``fetch`` without a reactor: aiohttp, through the running test's mock server."""
    import aiohttp

    proxy = f"http://127.0.0.1:{_serving[-1].port}" if _serving else None
    try:
        async with (
            aiohttp.ClientSession(auto_decompress=False) as session,
            session.get(url, proxy=proxy, allow_redirects=False) as response,
        ):
            body = await response.read()
            headers = {name.lower(): value for name, value in response.headers.items()}
            return Fetched(response.status, headers, body)
    except aiohttp.ClientConnectionError as error:  # as Twisted's Agent says it
        raise ConnectionError(f"Connection lost: {error}") from error


def when(condition: Callable[[], bool], then: Callable[[], object]) -> list[bool]:
    """Call ``then`` once ``condition()`` holds, looked at every 10 ms; the flag says it did.

    For ordering a test's events by the crawl's state (a count of parked
    requests, say) rather than by how fast the machine is.
    """
    fired = [False]
    if reactorless():
        if condition():
            fired[0] = True
            then()
            return fired

        async def look_in_loop() -> None:
            while not condition():
                await asyncio.sleep(0.01)
            fired[0] = True
            then()

        _background.add(task := asyncio.get_running_loop().create_task(look_in_loop()))
        task.add_done_callback(_background.discard)
        return fired

    from twisted.internet.task import LoopingCall

    def look() -> None:
        if condition():
            fired[0] = True
            loop.stop()
            then()

    loop = LoopingCall(look)
    loop.clock = cast("IReactorTime", get_reactor())
    loop.start(0.01, now=True)
    return fired


async def until(condition: Callable[[], bool]) -> None:
    """Return once ``condition()`` holds, looked at every 10 ms (see :func:`when`).

    From a test's body or from a coroutine Scrapy runs (an asyncio task
    under the asyncio reactor, where a Deferred cannot be awaited as such).
    """
    while not condition():
        if reactorless():
            await asyncio.sleep(0.01)
            continue
        tick: Deferred[None] = Deferred()
        get_reactor().callLater(0.01, tick.callback, None)
        if _in_asyncio_task():
            await tick.asFuture(asyncio.get_running_loop())
        else:
            await tick


async def sleep(seconds: float) -> None:
    """Let ``seconds`` pass, the reactor or the loop (and the mock server) running meanwhile."""
    if reactorless():
        await asyncio.sleep(seconds)
        return
    from twisted.internet.task import deferLater

    waited: Deferred[None] = deferLater(cast("IReactorTime", get_reactor()), seconds)
    if _in_asyncio_task():
        await waited.asFuture(asyncio.get_running_loop())
    else:
        await waited


T = TypeVar("T")


def as_scrapy_runs(coroutine: Awaitable[T]) -> Awaitable[T]:
    """``coroutine`` as Scrapy runs a component's: ``deferred_from_coro`` in a reactor (an
    asyncio task under the asyncio one), an asyncio task without a reactor; a test awaits it.
    """
    if reactorless():
        return asyncio.ensure_future(coroutine)
    from scrapy.utils.defer import deferred_from_coro

    return cast("Awaitable[T]", deferred_from_coro(coroutine))


async def in_thread(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``call(*args, **kwargs)`` in a thread, the reactor (or the loop) running meanwhile."""
    if reactorless():
        return await asyncio.to_thread(call, *args, **kwargs)
    from twisted.internet.threads import deferToThread

    done: Deferred[T] = deferToThread(call, *args, **kwargs)
    if _in_asyncio_task():
        return await done.asFuture(asyncio.get_running_loop())
    return await done


class Running(Generic[T]):
    """A coroutine started now (a crawl, say), awaited later; ``done`` says whether it ended."""

    def __init__(self, coroutine: Coroutine[Any, Any, T]) -> None:
        self._run: Deferred[T] | asyncio.Future[T] = (
            asyncio.ensure_future(coroutine) if reactorless() else Deferred.fromCoroutine(coroutine)
        )

    @property
    def done(self) -> bool:
        run = self._run
        return run.done() if isinstance(run, asyncio.Future) else run.called

    def __await__(self) -> Generator[Any, Any, T]:
        return self._run.__await__()

    def forget(self) -> None:
        """Never to be awaited: its failure (cut off as the test ends, say) is no error."""
        run = self._run
        if isinstance(run, asyncio.Future):
            run.add_done_callback(lambda done: done.cancelled() or done.exception())
        else:
            run.addErrback(lambda _: None)


_background: set[asyncio.Task[None]] = set()
"""The tasks ``when`` runs without a reactor, kept until they end."""


def _in_asyncio_task() -> bool:
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no running asyncio loop
        return False


def release_when(
    mockserver: MockServer, host: str, count: int, then: Callable[[], object]
) -> list[bool]:
    """Call ``then`` once ``host`` has received ``count`` page requests; the flag says it did."""
    fired = [False]

    def listen(record: RequestRecord) -> None:
        pages = [r for r in mockserver.requests_for(host) if r.path != "/robots.txt"]
        if record.host == host and len(pages) == count and not fired[0]:
            fired[0] = True
            call_later(0, then)

    mockserver.listeners.append(listen)
    return fired
