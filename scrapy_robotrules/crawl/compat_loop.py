"""Part of :mod:`.compat`: the crawl's loop, in every mode Scrapy runs a crawl in.

Under the asyncio reactor (Scrapy's default), Twisted's default reactor, or
no reactor at all (``TWISTED_REACTOR_ENABLED = False``, Scrapy 2.15+), where
importing ``twisted.internet.reactor`` is forbidden: timers, sleeps and
threads that work in each, chosen by feature detection as :mod:`.compat`
does. Used through it (``compat.call_later``), which re-exports them.

SPEC: none (Scrapy's and Twisted's loops, for the parts that hold SPEC 6 to 8).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from twisted.internet.base import DelayedCall, ReactorBase

__all__ = ["Timer", "call_later", "in_thread", "reactorless", "sleep"]

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
