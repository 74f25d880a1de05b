"""Run real Scrapy crawls, in the test's own reactor, and collect what happened.

The tests run under pytest-twisted, which installs the reactor chosen with
``pytest --reactor=asyncio`` or ``--reactor=default`` for the whole session
and runs it. A crawl here is a ``CrawlerRunner`` crawl in that reactor, with
every host name resolved to the ``MockServer`` (see ``LoopbackResolver``).
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Generic, ParamSpec, TypeVar, cast

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
from tests.helpers.mockserver import MockServer, RequestRecord, get_reactor, install_loopback_dns
from tests.helpers.recording_spider import RecordingSpider as RecordingSpider  # noqa: PLC0414 (re-exported)

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


def reactor_settings() -> dict[str, Any]:
    """Settings that match the installed reactor (Scrapy refuses a mismatch)."""
    return {} if is_asyncio_reactor_installed() else {"TWISTED_REACTOR": None}


def async_test(
    test: Callable[P, Coroutine[Any, Any, None]],
) -> Callable[P, Deferred[None]]:
    """Mark an ``async def`` test to run in the reactor, under either reactor."""
    return cast("Callable[P, Deferred[None]]", pytest_twisted.ensureDeferred(test))


@pytest.fixture(name="mockserver")
def mockserver_fixture() -> Iterator[MockServer]:
    """A fresh ``MockServer`` per test; import this into a test module or conftest."""
    server = MockServer()
    yield server
    pytest_twisted.blockon(server.stop())


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
        request.meta.setdefault("proxy", self.proxy)


def through_proxy(mockserver: MockServer) -> dict[str, Any]:
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
    install_loopback_dns()
    runner = CrawlerRunner({**BASE_SETTINGS, **reactor_settings(), **(settings or {})})
    crawler = runner.create_crawler(spider_cls)
    handler = _RecordsHandler()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    reactor = get_reactor()
    alarm: Deferred[None] = Deferred(lambda _: timer.cancel())
    timer = reactor.callLater(crawl_timeout, alarm.callback, None)
    try:
        winner, _ = await race([runner.crawl(crawler, **spider_kwargs), alarm])
        if winner == 1:
            raise AssertionError(f"the crawl was still running after {crawl_timeout} s")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    spider = cast("SpiderT", crawler.spider)
    return CrawlResult(spider, crawler, crawler.stats.get_stats(), handler.records)


async def refused_crawl(
    spider_cls: type[Spider], settings: Mapping[str, Any], match: str, **spider_kwargs: Any
) -> RobotRulesSettingError:
    """Start a crawl that a bad value must stop: the error it stopped with (matching ``match``).

    Checks it stopped before any download.
    """
    install_loopback_dns()
    runner = CrawlerRunner({**BASE_SETTINGS, **reactor_settings(), **settings})
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


def when(condition: Callable[[], bool], then: Callable[[], object]) -> list[bool]:
    """Call ``then`` once ``condition()`` holds, looked at every 10 ms; the flag says it did.

    For ordering a test's events by the crawl's state (a count of parked
    requests, say) rather than by how fast the machine is.
    """
    from twisted.internet.task import LoopingCall

    fired = [False]

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
        tick: Deferred[None] = Deferred()
        get_reactor().callLater(0.01, tick.callback, None)
        if _in_asyncio_task():
            await tick.asFuture(asyncio.get_running_loop())
        else:
            await tick


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
            get_reactor().callLater(0, then)

    mockserver.listeners.append(listen)
    return fired
