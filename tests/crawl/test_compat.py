"""``scrapy_robotrules.crawl.compat`` against the installed Scrapy's real objects.

Every function of the compatibility module is exercised here on a real
crawler, engine, downloader, slot and scheduler, and asserted by its
effect, so that a supported Scrapy version that moves or changes what the
module reaches for fails here, not in a user's crawl. CI runs these with
the newest and with the oldest supported Scrapy (they are ``crawl`` tests).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import scrapy
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request
from scrapy.core.downloader import Downloader, Slot
from scrapy.core.engine import ExecutionEngine
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.downloadermiddlewares.useragent import UserAgentMiddleware
from scrapy.exceptions import CloseSpider
from scrapy.http import FormRequest, JsonRequest, Response
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from scrapy_robotrules.crawl import compat
from tests.helpers.crawling import (
    SCRAPY_VERSION,
    RecordingSpider,
    as_scrapy_runs,
    async_test,
    reactorless,
    run_spider,
)
from tests.helpers.demo import run_demo
from tests.helpers.mockserver import MockServer, Reply

CRAWL_TESTS = True
"""Run under both reactors and on the oldest supported Scrapy (see conftest.py)."""

Probe = Callable[[Crawler, Response], Awaitable[None]]


class ProbeSpider(RecordingSpider):
    """Runs ``probe(crawler, response)`` in the callback of each start URL, engine running."""

    def __init__(self, probe: Probe, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.probe = probe
        self.errors: list[BaseException] = []

    async def parse(self, response: Response, **kwargs: Any) -> Any:  # type: ignore[override]
        self.crawled.append(response.url)
        try:
            await self.probe(self.crawler, response)
        except CloseSpider:
            raise
        except BaseException as exc:  # asserted by the test, not lost in the log
            self.errors.append(exc)


async def probe_crawl(
    mockserver: MockServer, probe: Probe, settings: dict[str, Any] | None = None
) -> Crawler:
    url = mockserver.url("site.test", "/page")
    result = await run_spider(
        ProbeSpider, {"ROBOTSTXT_OBEY": False, **(settings or {})}, start_urls=[url], probe=probe
    )
    spider = result.spider
    assert spider.crawled == [url]
    if spider.errors:
        raise spider.errors[0]
    return result.crawler


# The engine and what hangs from it.


def test_there_is_no_engine_before_the_crawl() -> None:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    assert compat.engine(crawler) is None
    assert compat.downloader(crawler) is None
    assert compat.download_slot(crawler, Request("http://site.test/")) is None


@async_test
async def test_the_running_engine_and_its_downloader(mockserver: MockServer) -> None:
    seen: dict[str, Any] = {}

    async def probe(crawler: Crawler, response: Response) -> None:
        seen["engine"] = compat.engine(crawler)
        seen["public"] = crawler.engine  # set while the crawl runs, on every version
        seen["downloader"] = compat.downloader(crawler)

    await probe_crawl(mockserver, probe)
    engine = seen["engine"]
    assert isinstance(engine, ExecutionEngine)
    assert engine is seen["public"]
    assert isinstance(seen["downloader"], Downloader)
    assert seen["downloader"] is engine.downloader


# Download slots.


@pytest.mark.filterwarnings("ignore:The RANDOMIZE_DOWNLOAD_DELAY setting is deprecated")
@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"RANDOMIZE_DOWNLOAD_DELAY": False},
        {"RANDOMIZE_DOWNLOAD_DELAY": True},
        pytest.param(
            {"DOWNLOAD_DELAY_JITTER": 0.25},
            marks=pytest.mark.skipif(
                "DOWNLOAD_DELAY_JITTER" not in Settings(), reason="Scrapy 2.19+"
            ),
        ),
    ],
)
@async_test
async def test_a_slot_varies_its_delay_by_the_jitter_the_settings_give(
    mockserver: MockServer, settings: dict[str, Any]
) -> None:
    seen: dict[str, Any] = {}

    async def probe(crawler: Crawler, response: Response) -> None:
        slot = compat.download_slot(crawler, response.request)  # type: ignore[arg-type]
        assert isinstance(slot, Slot)
        seen["jitter"] = compat.slot_jitter(slot)
        seen["default"] = compat.default_jitter(crawler.settings)
        seen["delay"] = slot.delay
        seen["delays"] = [slot.download_delay() for _ in range(400)]

    await probe_crawl(mockserver, probe, {**settings, "DOWNLOAD_DELAY": 0.01})
    jitter = seen["jitter"]
    assert jitter == seen["default"]
    assert seen["delay"] == 0.01
    delays = seen["delays"]
    # The slot's random delays span what the jitter says, no more.
    assert min(delays) >= 0.01 * (1 - jitter) - 1e-12
    assert max(delays) <= 0.01 * (1 + jitter) + 1e-12
    if jitter:
        assert max(delays) - min(delays) > 0.01 * jitter
    else:
        assert set(delays) == {0.01}


@async_test
async def test_a_slots_jitter_is_limited_and_its_delays_follow(mockserver: MockServer) -> None:
    seen: dict[str, Any] = {}

    async def probe(crawler: Crawler, response: Response) -> None:
        slot = compat.download_slot(crawler, response.request)  # type: ignore[arg-type]
        assert isinstance(slot, Slot)
        seen["kept"] = compat.limit_jitter(slot, 0.1)
        seen["after"] = compat.slot_jitter(slot)
        seen["delays"] = [slot.download_delay() for _ in range(400)]

    # Scrapy's default: +-50%.
    await probe_crawl(mockserver, probe, {"DOWNLOAD_DELAY": 0.01})
    kept = seen["kept"]
    assert kept == seen["after"] <= 0.1  # 0.1, or 0 where slots know only on/off
    assert min(seen["delays"]) >= 0.01 * (1 - kept) - 1e-12
    assert max(seen["delays"]) <= 0.01 * (1 + kept) + 1e-12


@async_test
async def test_a_slots_wait_is_what_it_owes_then_a_gap_per_request_queued(
    mockserver: MockServer,
) -> None:
    seen: dict[str, Any] = {}

    async def probe(crawler: Crawler, response: Response) -> None:
        slot = compat.download_slot(crawler, response.request)  # type: ignore[arg-type]
        assert isinstance(slot, Slot)
        seen["gap"] = slot.delay * (1 + compat.slot_jitter(slot))
        # The page left the queue moments ago: the slot owes nearly a whole gap.
        seen["owed"] = compat.slot_wait(slot)
        ahead: list[tuple[Request, Deferred[Response]]] = [
            (Request(f"http://site.test/{n}"), Deferred()) for n in range(3)
        ]
        slot.queue.extend(ahead)  # as if queued behind it (taken out again at once)
        try:
            seen["queued"] = compat.slot_wait(slot)
        finally:
            for each in ahead:
                slot.queue.remove(each)
        slot.lastseen -= 2 * seen["gap"]  # as if it left long ago: nothing owed
        seen["none_owed"] = compat.slot_wait(slot)
        slot.delay = 0.0
        seen["no_delay"] = compat.slot_wait(slot)

    await probe_crawl(mockserver, probe, {"DOWNLOAD_DELAY": 10.0})
    gap = seen["gap"]
    assert gap >= 10.0
    # Read on the clock the downloader keeps lastseen on (else far off: 0, or years).
    assert gap - 5.0 < seen["owed"] <= gap
    assert seen["queued"] == pytest.approx(seen["owed"] + 3 * gap, abs=1.0)
    assert seen["none_owed"] == 0.0
    assert seen["no_delay"] == 0.0


@async_test
async def test_the_crawl_is_closing_once_a_stop_begins(mockserver: MockServer) -> None:
    seen: list[bool] = []

    async def probe(crawler: Crawler, response: Response) -> None:
        seen.append(compat.crawl_closing(crawler))
        if hasattr(crawler, "stop_async"):
            stopping = deferred_from_coro(crawler.stop_async())
        else:  # Scrapy before 2.14
            stopping = crawler.stop()
        await compat.sleep(0)  # the stop runs as a task under asyncio
        seen.append(compat.crawl_closing(crawler))
        del stopping

    crawler = await probe_crawl(mockserver, probe)
    assert seen == [False, True]
    assert compat.crawl_closing(crawler)  # and once closed
    assert not compat.crawl_closing(get_crawler(settings_dict={}))  # before any crawl


@async_test
async def test_a_request_watched_in_a_slot_counts_as_active_there(mockserver: MockServer) -> None:
    seen: dict[str, Any] = {}

    async def probe(crawler: Crawler, response: Response) -> None:
        slot = compat.download_slot(crawler, response.request)  # type: ignore[arg-type]
        assert slot is not None
        waiting = Request(response.url + "?waiting")
        with compat.watch_in_slot(slot, waiting):
            seen["inside"] = waiting in slot.active
        seen["after"] = waiting in slot.active
        with compat.watch_in_slot(None, waiting):
            pass  # no slot yet: nothing to watch, no error

    await probe_crawl(mockserver, probe)
    assert seen == {"inside": True, "after": False}


@async_test
async def test_an_extra_download_place_lets_one_more_request_through(
    mockserver: MockServer,
) -> None:
    seen: dict[str, Any] = {}

    async def probe(crawler: Crawler, response: Response) -> None:
        downloader = compat.downloader(crawler)
        assert downloader is not None
        busy = [Request(f"{response.url}?busy={n}") for n in range(2)]
        downloader.active.update(busy)  # as if two downloads were under way
        try:
            seen["full"] = downloader.needs_backout()
            with compat.extra_download_place(downloader):
                seen["inside"] = downloader.needs_backout()
            seen["after"] = downloader.needs_backout()
        finally:
            downloader.active.difference_update(busy)

    await probe_crawl(mockserver, probe, {"CONCURRENT_REQUESTS": 2})
    assert seen == {"full": True, "inside": False, "after": True}


@pytest.mark.skipif(
    SCRAPY_VERSION < (2, 18), reason="CONCURRENT_REQUESTS = 0 means no limit from 2.18"
)
@async_test
async def test_no_download_limit_stays_no_limit(mockserver: MockServer) -> None:
    seen: dict[str, Any] = {}

    async def probe(crawler: Crawler, response: Response) -> None:
        downloader = compat.downloader(crawler)
        assert downloader is not None
        with compat.extra_download_place(downloader):
            seen["inside"] = downloader.needs_backout()
        with compat.extra_download_place(None):
            pass

    await probe_crawl(mockserver, probe, {"CONCURRENT_REQUESTS": 0})
    assert seen == {"inside": False}


# Downloads and signals through the engine.


@async_test
async def test_a_download_outside_the_scheduler_passes_the_downloader_middlewares(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("site.test", Reply(body=b"User-agent: *\nDisallow: /x\n"))
    seen: dict[str, Any] = {}

    async def probe(crawler: Crawler, response: Response) -> None:
        robots = Request(mockserver.url("site.test", "/robots.txt"), meta={"probe": 1})
        got = await compat.download(crawler, robots)
        seen["status"], seen["body"] = got.status, got.body
        seen["stats"] = crawler.stats.get_value("downloader/request_count")

    await probe_crawl(mockserver, probe)
    assert seen == {"status": 200, "body": b"User-agent: *\nDisallow: /x\n", "stats": 2}
    assert [r.path for r in mockserver.requests_for("site.test")] == ["/page", "/robots.txt"]


@async_test
async def test_a_signal_sent_waits_for_its_asynchronous_handlers(mockserver: MockServer) -> None:
    signal = object()
    events: list[str] = []

    async def slow_handler(**kwargs: Any) -> None:
        await compat.sleep(0.05)
        events.append(f"async {kwargs['value']}")

    async def probe(crawler: Crawler, response: Response) -> None:
        crawler.signals.connect(slow_handler, signal=signal)
        await compat.send_signal(crawler, signal, value=1)
        events.append("sent")

    await probe_crawl(mockserver, probe)
    assert events == ["async 1", "sent"]


@async_test
async def test_a_signal_without_receivers_is_not_dispatched(mockserver: MockServer) -> None:
    signal, other = object(), object()
    sent: list[object] = []
    heard: list[int] = []

    async def probe(crawler: Crawler, response: Response) -> None:
        manager = crawler.signals
        for name in ("send_catch_log_async", "send_catch_log_deferred"):
            real = getattr(manager, name, None)
            if real is not None:

                def recording(real: Any = real, **kwargs: Any) -> Any:
                    sent.append(kwargs["signal"])
                    return real(**kwargs)

                setattr(manager, name, recording)

        def listener(**kwargs: Any) -> None:
            heard.append(kwargs["value"])

        crawler.signals.connect(listener, signal=other)  # weakly: held by this scope
        await compat.send_signal(crawler, signal, value=1)  # nobody listens
        await compat.send_signal(crawler, other, value=2)

    await probe_crawl(mockserver, probe)
    assert [each for each in sent if each in (signal, other)] == [other]
    assert heard == [2]


# Timers.


def in_loop(test: Callable[[], Awaitable[None]]) -> Callable[[], Deferred[None]]:
    """Run ``test`` as Scrapy runs its coroutines (an asyncio task under the asyncio reactor)."""

    @async_test
    async def run() -> None:
        await as_scrapy_runs(test())

    run.__name__ = test.__name__
    return run


@in_loop
async def test_a_timer_calls_once_after_its_delay_unless_cancelled() -> None:
    calls: list[float] = []
    started = time.monotonic()
    timer = compat.call_later(0.05, lambda: calls.append(time.monotonic() - started))
    cancelled = compat.call_later(0.05, calls.append, -1.0)
    cancelled.cancel()
    await compat.sleep(0.15)
    assert len(calls) == 1
    assert calls[0] >= 0.04
    timer.cancel()  # after it ran: no error
    cancelled.cancel()  # twice: no error


@in_loop
async def test_a_function_runs_in_a_thread_and_its_result_is_awaited() -> None:
    # Under a reactor: not reactorless, the reactor's pool; without one, asyncio's.
    assert compat.reactorless() == reactorless()
    result = await maybe_deferred_to_future(compat.in_thread(threading.get_ident))
    assert result != threading.get_ident()


@in_loop
async def test_sleep_sleeps() -> None:
    started = time.monotonic()
    await compat.sleep(0.1)
    assert time.monotonic() - started >= 0.09


# The add-on's reading of component priorities.


BUILTIN = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


@pytest.mark.parametrize(
    ("project", "expected"),
    [
        ({}, 100),
        ({BUILTIN: 543}, 543),
        ({RobotsTxtMiddleware: 321}, 321),
        ({BUILTIN: None}, None),
        ({RobotsTxtMiddleware: None}, None),
        ({BUILTIN: 200, RobotsTxtMiddleware: 300}, 300),
    ],
)
def test_the_priority_of_a_component_merges_the_project_over_the_base(
    project: dict[Any, int | None], expected: int | None
) -> None:
    settings = Settings({"DOWNLOADER_MIDDLEWARES": project})
    got = compat.component_priority(settings, "DOWNLOADER_MIDDLEWARES", RobotsTxtMiddleware)
    assert got == expected
    with_base = getattr(settings, "get_component_priority_dict_with_base", None)
    if with_base is not None:  # Scrapy 2.15.1+: the same answer as Scrapy's own reading
        merged = with_base("DOWNLOADER_MIDDLEWARES")
        scrapys = [v for k, v in merged.items() if load_object(k) is RobotsTxtMiddleware]
        assert scrapys == ([expected] if expected is not None else [])


@pytest.mark.parametrize(
    ("project", "enabled"),
    [
        ({}, True),
        ({BUILTIN: None}, False),
        ({RobotsTxtMiddleware: None}, False),
        ({BUILTIN: None, RobotsTxtMiddleware: 300}, True),
    ],
)
def test_the_enabled_components_merge_the_project_over_the_base(
    project: dict[Any, int | None], enabled: bool
) -> None:
    settings = Settings({"DOWNLOADER_MIDDLEWARES": project})
    components = compat.enabled_components(settings, "DOWNLOADER_MIDDLEWARES")
    assert (RobotsTxtMiddleware in components) is enabled
    assert UserAgentMiddleware in components  # the base's others stay on
    with_base = getattr(settings, "get_component_priority_dict_with_base", None)
    if with_base is not None:  # Scrapy 2.15.1+: the same answer as Scrapy's own reading
        merged = with_base("DOWNLOADER_MIDDLEWARES")
        assert components == [load_object(k) for k, v in merged.items() if v is not None]


class _WantsStats:
    """A feed storage that reads more of its crawler than the settings when built."""

    def __init__(self, uri: str, stats: object) -> None:
        self.uri = uri

    @classmethod
    def from_crawler(cls, crawler: Crawler, uri: str) -> _WantsStats:
        return cls(uri, crawler.stats)


def test_a_feed_storage_is_built_from_the_settings_as_feedexporter_builds_it() -> None:
    from scrapy.extensions.feedexport import FTPFeedStorage, S3FeedStorage

    settings = Settings({"FEED_STORAGE_FTP_ACTIVE": True})
    ftp = compat.feed_storage(FTPFeedStorage, settings, "ftp://bob:pw@host/audit.jsonl")
    assert isinstance(ftp, FTPFeedStorage)
    assert ftp.use_active_mode  # read from the settings, as from a crawler's
    assert compat.feed_storage(_WantsStats, settings, "x://y") is None  # left to the crawl
    try:
        import boto3  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        with pytest.raises(scrapy.exceptions.NotConfigured, match="missing boto3"):
            compat.feed_storage(S3FeedStorage, settings, "s3://bucket/audit.jsonl")


def test_robots_parsed_is_scrapys_own_signal_where_it_has_one() -> None:
    """Scrapy 2.18 added ``robots_parsed``; before, the manager sends none (and does not fail)."""
    assert compat.ROBOTS_PARSED is getattr(scrapy.signals, "robots_parsed", None)
    assert (compat.ROBOTS_PARSED is not None) == (SCRAPY_VERSION >= (2, 18))


def test_scrapy_crawl_exits_non_zero_when_the_package_fails_at_start_up() -> None:
    """Scrapy 2.14.x judged a start by ``crawler.spider`` alone, and exited 0 (failing_start)."""
    process = run_demo("-s", "ROBOTRULES_PRECEDENCE=longest")
    log, _ = process.communicate(timeout=60)
    assert process.returncode == 1, log
    assert "ROBOTRULES_PRECEDENCE must be one of" in log
    assert "Spider opened" not in log


def test_a_requests_header_is_read_as_headers_get_reads_it() -> None:
    bare = Request("http://site.test/a")
    assert compat.request_header(bare, b"User-Agent") is None
    named = Request("http://site.test/a", headers={"user-agent": ["first", "Bot/2"]})
    assert compat.request_header(named, b"User-Agent") == named.headers.get(b"User-Agent")
    assert compat.request_header(named, b"User-Agent") == b"Bot/2"
    named.headers[b"User-Agent"] = b"Other/1"  # set after the request was made
    assert compat.request_header(named, b"User-Agent") == b"Other/1"
    assert compat.request_header(named, b"Accept") is None


_HEADER_NAMES = (b"User-Agent", b"Accept", b"Content-Type", b"X-Robots-Tag")
"""Names as ``Headers`` keys them (title-cased): what ``request_header`` is asked for."""


@st.composite
def _requests(draw: st.DrawFn) -> Request:
    """A Request, FormRequest or JsonRequest; its meta and headers given or not."""
    url = draw(
        st.from_regex(r"https?://[a-z]{1,8}\.test(:[0-9]{2,4})?/[a-z0-9/?=%]{0,12}", fullmatch=True)
    )
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        kwargs["meta"] = draw(
            st.dictionaries(st.sampled_from(["depth", "dont_obey_robotstxt", "x"]), st.integers())
        )
    if draw(st.booleans()):
        names = st.sampled_from(
            [case(name.decode()) for name in _HEADER_NAMES for case in (str.lower, str.upper)]
        )
        value = st.text(max_size=8) | st.binary(max_size=8)
        values = st.one_of(value, st.lists(value, max_size=3), st.none())  # None: no value
        kwargs["headers"] = draw(st.dictionaries(names, values))
    kind = draw(st.sampled_from([Request, FormRequest, JsonRequest]))
    if kind is FormRequest:
        formdata = draw(st.none() | st.dictionaries(st.sampled_from(["q", "page"]), st.text()))
        return FormRequest(url, formdata=formdata, **kwargs)
    if kind is JsonRequest:
        return JsonRequest(
            url, data=draw(st.none() | st.dictionaries(st.text(), st.integers())), **kwargs
        )
    return Request(url, **kwargs)


@settings(max_examples=300, deadline=None)
@given(
    request=_requests(), later=st.none() | st.tuples(st.sampled_from(_HEADER_NAMES), st.binary())
)
def test_request_header_reads_what_headers_get_gives(
    request: Request, later: tuple[bytes, bytes] | None
) -> None:
    """The reference: ``request.headers.get(name)``, whatever the request's kind, meta, headers."""
    if later is not None:  # a header set after the request was made
        request.headers[later[0]] = later[1]
    for name in _HEADER_NAMES:
        assert compat.request_header(request, name) == request.headers.get(name)
