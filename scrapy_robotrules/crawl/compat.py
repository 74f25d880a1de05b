"""Every reach into Scrapy beyond its documented, stable API, in one place.

The package supports Scrapy 2.13.4 to the newest release (see
docs/compatibility.rst). What changed between those versions, and what only a
private or undocumented attribute gives, is read here and nowhere else;
``tests/crawl/test_compat.py`` checks each function against the installed
Scrapy's real objects, so a release that breaks one fails there first.
Each function says which versions take which path (by feature detection).
The crawl's loop is read here too, in each mode Scrapy runs a crawl in: the
asyncio reactor (Scrapy's default), Twisted's default reactor, or no reactor
at all (``TWISTED_REACTOR_ENABLED = False``, Scrapy 2.15+), where importing
``twisted.internet.reactor`` is forbidden: timers, sleeps and threads that
work in each.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from pydispatch.dispatcher import getAllReceivers  # type: ignore[import-untyped]
from scrapy import signals as scrapy_signals
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.core.downloader import Downloader, Slot
    from scrapy.core.engine import ExecutionEngine
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from twisted.internet.base import DelayedCall, ReactorBase

__all__ = [
    "ROBOTSTXT_DENIED",
    "ROBOTSTXT_DENIED_REASON",
    "ROBOTS_PARSED",
    "Timer",
    "call_later",
    "component_priority",
    "crawl_closing",
    "default_jitter",
    "disable_component",
    "download",
    "download_slot",
    "downloader",
    "enabled_components",
    "engine",
    "extra_download_place",
    "failing_start",
    "feed_storage",
    "in_thread",
    "limit_jitter",
    "reactorless",
    "request_header",
    "send_signal",
    "sleep",
    "slot_jitter",
    "slot_wait",
    "watch_in_slot",
]

T = TypeVar("T")


class Timer(Protocol):
    """A scheduled call; ``cancel()`` may be called after it ran or was cancelled."""

    def cancel(self) -> None: ...


class _TwistedTimer:
    def __init__(self, call: DelayedCall) -> None:
        self._call = call

    def cancel(self) -> None:
        if self._call.active():
            self._call.cancel()


_SCRAPY_CALL_LATER: Callable[..., Timer] | None
try:
    _SCRAPY_CALL_LATER = import_module("scrapy.utils.asyncio").call_later
except (ImportError, AttributeError):
    _SCRAPY_CALL_LATER = None

_IS_REACTORLESS: Callable[[], bool] | None
try:
    _IS_REACTORLESS = import_module("scrapy.utils.reactorless").is_reactorless
except (ImportError, AttributeError):
    _IS_REACTORLESS = None


def reactorless() -> bool:
    """Whether the crawl runs without a Twisted reactor (``TWISTED_REACTOR_ENABLED = False``).

    2.15+: ``scrapy.utils.reactorless.is_reactorless()``, asked from the crawl's
    loop (an asyncio loop runs, no reactor is installed); importing
    ``twisted.internet.reactor`` is then forbidden. Before 2.15 there is no such mode.
    """
    return _IS_REACTORLESS is not None and _IS_REACTORLESS()


def call_later(seconds: float, func: Callable[..., object], *args: Any) -> Timer:
    """Call ``func(*args)`` in ``seconds`` under the crawl's loop: 2.14+ ``scrapy.utils.asyncio.
    call_later`` (asyncio's loop if any, else the reactor); 2.13 ``reactor.callLater``."""
    if _SCRAPY_CALL_LATER is not None:
        return _SCRAPY_CALL_LATER(seconds, func, *args)
    from twisted.internet import reactor

    return _TwistedTimer(cast("ReactorBase", reactor).callLater(seconds, func, *args))


def in_thread(func: Callable[[], T]) -> Deferred[T]:
    """``func()`` run in a thread; its result as a Deferred (awaited with
    ``maybe_deferred_to_future`` in every mode).

    Without a reactor: ``asyncio.to_thread`` on the crawl's loop. Under a
    reactor: ``deferToThread``, the reactor's thread pool
    (``REACTOR_THREADPOOL_MAXSIZE``), which the reactor stops in order at exit.
    """
    if reactorless():
        return Deferred.fromFuture(asyncio.ensure_future(asyncio.to_thread(func)))
    from twisted.internet.threads import deferToThread

    return deferToThread(func)


async def sleep(seconds: float) -> None:
    """Sleep under either reactor from 2.13 on (``scrapy.utils.asyncio.sleep`` is 2.18+)."""
    done: Deferred[None] = Deferred()
    call_later(seconds, done.callback, None)
    await maybe_deferred_to_future(done)


def request_header(request: Request, name: bytes) -> bytes | None:
    """``request.headers.get(name)`` for a title-cased ``name``, without normalising or raising.

    ``Headers`` (2.13 to 2.19) is a dict of title-cased names to lists of
    values, read as one here; its ``get`` normalises the name and the default
    and, for a missing header (most requests offered have no ``User-Agent``
    until the downloader sets one), raises and catches an ``IndexError``.
    """
    values: list[bytes] | None = dict.get(request.headers, name)
    return values[-1] if values else None


async def download(crawler: Crawler, request: Request) -> Response:
    """Download through the downloader middlewares, outside the scheduler (2.14+:
    ``engine.download_async()``; 2.13: ``engine.download()``, a Deferred)."""
    running = engine(crawler)
    if running is None:
        raise RuntimeError(f"No crawl is running to download {request}")
    download_async = getattr(running, "download_async", None)
    if download_async is not None:
        return cast("Response", await download_async(request))
    return cast("Response", await maybe_deferred_to_future(running.download(request)))


async def send_signal(crawler: Crawler, signal: object, **kwargs: Any) -> None:
    """Send ``signal`` and wait for its asynchronous handlers; their errors are logged.

    2.14+: ``signals.send_catch_log_async()``; 2.13: ``send_catch_log_deferred()``.
    Not at all without a receiver (PyDispatcher's, for ``signals.sender``): a
    send is costly even with no one to hear it, and there is one for every
    robots.txt fetched.
    """
    if next(iter(getAllReceivers(crawler.signals.sender, signal)), None) is None:
        return
    send_async = getattr(crawler.signals, "send_catch_log_async", None)
    if send_async is not None:
        await send_async(signal=signal, **kwargs)
        return
    await maybe_deferred_to_future(crawler.signals.send_catch_log_deferred(signal=signal, **kwargs))


ROBOTS_PARSED: object | None = getattr(scrapy_signals, "robots_parsed", None)
"""Scrapy's ``robots_parsed`` signal (2.18+); ``None`` before, where nothing is sent."""

ROBOTSTXT_DENIED_REASON = "robotstxt_denied"


def _builtin_denies() -> bool:
    """Whether Scrapy's own ``RobotsTxtMiddleware`` gives the ``robotstxt_denied`` finish reason.

    No release up to 2.19 does, and no constant names the reason: the
    built-in middleware's code is read for it (its docstring where the code
    cannot be read), so the version that adds it is found, whichever it is.
    """
    from scrapy.downloadermiddlewares import robotstxt

    try:
        text = inspect.getsource(robotstxt)
    except (OSError, TypeError):
        text = robotstxt.RobotsTxtMiddleware.__doc__ or ""
    return f'CloseSpider("{ROBOTSTXT_DENIED_REASON}")' in text or (
        ROBOTSTXT_DENIED_REASON in (robotstxt.RobotsTxtMiddleware.__doc__ or "")
    )


ROBOTSTXT_DENIED: bool = _builtin_denies()
"""Whether this Scrapy ends a crawl ``robotstxt_denied`` when robots.txt denied every start
request it could have crawled (its development branch): the package then does the same."""


@contextmanager
def failing_start(crawler: Crawler) -> Iterator[None]:
    """An error raised in the block stops the crawl at start-up: make the exit code say so.

    ``scrapy crawl`` exits 1 when the crawl failed to start, judged on Scrapy
    2.14.x by ``crawler.spider`` alone: a component failing after the spider
    was made left exit code 0, so the spider is unset before the error goes
    on. Scrapy 2.13 and 2.15+ see the error itself too; there it changes nothing.
    """
    try:
        yield
    except Exception:
        crawler.spider = None
        raise


def engine(crawler: Crawler) -> ExecutionEngine | None:
    """The engine, or ``None`` before the crawl (2.17-: ``None`` until then; 2.18+: raises)."""
    try:
        return cast("ExecutionEngine | None", crawler.engine)
    except RuntimeError:
        return None


def downloader(crawler: Crawler) -> Downloader | None:
    """The engine's downloader (``engine.downloader``, every supported version)."""
    running = engine(crawler)
    # getattr: an embedder (or a test) may run the manager on an engine without one.
    return getattr(running, "downloader", None)


def download_slot(crawler: Crawler, request: Request) -> Slot | None:
    """The download slot ``request`` goes to, if made already (``downloader.slots``, 2.13+)."""
    running = downloader(crawler)
    return None if running is None else running.slots.get(running.get_slot_key(request))


def slot_jitter(slot: Slot) -> float:
    """How far a slot varies its delay at random, as a share (0.5: +-50%): ``Slot.jitter``
    (2.19+), else the boolean ``randomize_delay`` (+-50%)."""
    jitter = getattr(slot, "jitter", None)
    if jitter is None:
        jitter = 0.5 if getattr(slot, "randomize_delay", False) else 0.0
    return float(jitter)


@cache
def _slot_clock() -> Callable[[], float]:
    """The clock a slot's ``lastseen`` is read on: ``time.monotonic`` (2.16+), ``time.time``
    before; read where the downloader reads it (imported once a slot exists)."""
    module = import_module("scrapy.core.downloader")
    return cast("Callable[[], float]", getattr(module, "monotonic", None) or module.time)


def slot_wait(slot: Slot) -> float:
    """Seconds, at most, before a request given to ``slot`` now leaves its queue.

    A slot with a delay lets one request go per delay (2.13 to 2.19:
    ``_process_queue``), each gap at most ``delay * (1 + jitter)``: what it still
    owes since the last one left (``lastseen``), then a gap for each request
    queued ahead (``queue``). A slot without a delay lets them go as fast as its
    downloads end, which no one can say: 0.
    """
    gap = float(slot.delay) * (1.0 + slot_jitter(slot))
    if gap <= 0.0:
        return 0.0
    owed = slot.lastseen + gap - _slot_clock()()
    return max(0.0, owed) + len(slot.queue) * gap


def limit_jitter(slot: Slot, cap: float) -> float:
    """Bring the slot's random variation down to ``cap``; the variation it keeps.

    Scrapy 2.19+: ``Slot.jitter`` takes any share. Scrapy 2.13 to 2.18: the
    boolean ``Slot.randomize_delay`` knows only +-50% or nothing, so nothing.
    """
    jitter = slot_jitter(slot)
    if jitter <= cap:
        return jitter
    if hasattr(slot, "jitter"):
        slot.jitter = cap
        return cap
    slot.randomize_delay = False
    return 0.0


def crawl_closing(crawler: Crawler) -> bool:
    """Whether the crawl is stopping (a signal, ``crawler.stop()``) or its spider closing.

    2.13 to 2.19: ``engine.running`` turns false as a stop begins; the private
    ``engine._slot`` has ``closing`` set once the spider starts closing, and is
    gone once closed. A stand-in engine without these (tests) never closes.
    """
    running = engine(crawler)
    if running is None:
        return False
    if getattr(running, "running", True) is False:
        return True
    slot = getattr(running, "_slot", _NO_SLOT)
    if slot is _NO_SLOT:
        return False
    return slot is None or getattr(slot, "closing", None) is not None


_NO_SLOT = object()


def default_jitter(settings: BaseSettings) -> float:
    """The jitter the downloader gives a new slot, from the settings.

    2.19+: ``DOWNLOAD_DELAY_JITTER``, unless the deprecated ``RANDOMIZE_DOWNLOAD_DELAY``
    was set at a higher priority (as Scrapy decides). 2.13 to 2.18: the latter only.
    """
    if settings.getpriority("DOWNLOAD_DELAY_JITTER") is None:
        return 0.5 if settings.getbool("RANDOMIZE_DOWNLOAD_DELAY", True) else 0.0
    randomize = settings.getpriority("RANDOMIZE_DOWNLOAD_DELAY") or 0
    if randomize > max(
        SETTINGS_PRIORITIES["default"], settings.getpriority("DOWNLOAD_DELAY_JITTER") or 0
    ):
        return 0.5 if settings.getbool("RANDOMIZE_DOWNLOAD_DELAY") else 0.0
    return settings.getfloat("DOWNLOAD_DELAY_JITTER")


@contextmanager
def watch_in_slot(slot: Slot | None, request: Request) -> Iterator[None]:
    """Count ``request`` among the slot's active requests while the block runs.

    ``Slot.active`` (undocumented, 2.13 to 2.19): the downloader-aware queue reads it.
    """
    if slot is None:
        yield
        return
    slot.active.add(request)
    try:
        yield
    finally:
        slot.active.discard(request)


@contextmanager
def extra_download_place(running: Downloader | None) -> Iterator[None]:
    """Raise the downloader's ``CONCURRENT_REQUESTS`` limit by one while the block runs.

    ``Downloader.total_concurrency`` (undocumented, 2.13 to 2.19), which
    ``needs_backout()`` reads. 0 is left alone: no limit (2.18+).
    """
    limit = getattr(running, "total_concurrency", 0)
    limited = isinstance(limit, int) and limit > 0
    if limited:
        running.total_concurrency += 1  # type: ignore[union-attr]
    try:
        yield
    finally:
        if limited:
            running.total_concurrency -= 1  # type: ignore[union-attr]


class _SettingsOnly:
    """A crawler as a feed storage's ``from_crawler`` reads it when built: its settings."""

    def __init__(self, settings: BaseSettings) -> None:
        self.settings = settings


def feed_storage(storage: type[Any], settings: BaseSettings, uri: str) -> object | None:
    """``storage`` built for ``uri`` from ``settings`` alone, before there is a crawler.

    Scrapy's own storages (file, stdout, s3, gs, ftp) read only the
    crawler's settings when built, and refuse there what they cannot do
    (``NotConfigured`` without boto3), as ``FeedExporter`` finds when it
    builds them; their exception goes to the caller. ``None``: the storage
    wants more of a crawler than its settings, and is left to the crawl.
    """
    try:
        built: object = build_from_crawler(storage, cast("Crawler", _SettingsOnly(settings)), uri)
    except AttributeError:
        return None
    return built


def _component_priorities(settings: BaseSettings, name: str) -> dict[Any, Any]:
    """The components ``name`` merged with ``name_BASE`` names, loaded, by their priority
    (``None``: off). A key that does not load is left out: Scrapy fails on it at start.

    The last key naming a component wins, as ``get_component_priority_dict_with_base``
    (2.15.1+).
    """
    priorities: dict[Any, Any] = {}
    for key, value in [
        *settings.getdict(f"{name}_BASE").items(),
        *settings.getdict(name).items(),
    ]:
        try:
            loaded = load_object(key)
        except (NameError, TypeError, ValueError, ImportError, AttributeError):
            continue
        priorities[loaded] = value
    return priorities


def component_priority(settings: BaseSettings, name: str, cls: type) -> int | None:
    """The priority of ``cls`` in ``name`` merged with ``name_BASE``; ``None`` if off."""
    priority = _component_priorities(settings, name).get(cls)
    return int(priority) if priority is not None else None


def enabled_components(settings: BaseSettings, name: str) -> list[Any]:
    """The components on in ``name`` merged with ``name_BASE`` (classes, as loaded)."""
    return [
        component
        for component, priority in _component_priorities(settings, name).items()
        if priority is not None
    ]


def disable_component(settings: BaseSettings, name: str, cls: type) -> None:
    """Turn ``cls`` off in the ``name`` component priority dictionary, however it is named.

    Scrapy 2.15.1+ merges a setting with its ``_BASE`` by import path, so
    ``set_in_component_priority_dict(name, cls, None)`` does it. Scrapy 2.13
    to 2.15.0 merge by key as written: a class key does not override the
    base's import-path key (both would stay, the path one enabled), so every
    key naming ``cls``, in the setting or its base, gets ``None``.
    """
    if hasattr(settings, "get_component_priority_dict_with_base"):
        settings.set_in_component_priority_dict(name, cls, None)
        return
    components = settings.getdict(name)
    for key in [*settings.getdict(f"{name}_BASE"), *components]:
        with suppress(NameError, TypeError, ValueError, ImportError, AttributeError):
            if load_object(key) is cls:
                components[key] = None
    components[cls] = None
    settings.set(name, components, settings.getpriority(name) or 0)
