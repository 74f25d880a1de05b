"""The crawl variants compared in tests (this package, Scrapy's built-in middleware),
and what their crawls left."""

from __future__ import annotations

import inspect
import itertools
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from functools import partial
from typing import Any

from scrapy import Request
from scrapy.http import Response
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from scrapy_robotrules.crawl.compat import sleep
from scrapy_robotrules.crawl.manager import RobotsManager
from tests.helpers.crawling import (
    CrawlResult,
    RecordingSpider,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    until,
)
from tests.helpers.mockserver import MockServer, Reply, RequestRecord

OBEY: dict[str, Any] = {"ROBOTSTXT_OBEY": True, "RETRY_ENABLED": False, "DOWNLOAD_TIMEOUT": 1.0}
"""Settings of every crawl that obeys robots.txt, whichever middleware does it."""


OURS: dict[str, Any] = {
    **OBEY,
    "ADDONS": {"scrapy_robotrules.Addon": 0},
    "ROBOTRULES_RETRY_DELAY": 0.2,
    "ROBOTRULES_UNREACHABLE_TIMEOUT": 5.0,
}
"""Crawls with this package, as its users turn it on, with short waits."""


GIVING_UP_SOON: dict[str, Any] = {
    **OURS,
    "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.5,
    "RETRY_ENABLED": False,
}
"""Crawls with this package that give up on an unreachable robots.txt after half a second."""


BUILTIN: dict[str, Any] = dict(OBEY)
"""Crawls with Scrapy's own RobotsTxtMiddleware."""


PRIVATE = b"User-agent: *\nDisallow: /private\n"


def forbidding_and_unreachable(
    mockserver: MockServer, robots: bytes, paths: Sequence[str]
) -> list[str]:
    """URLs of ``paths`` on ``a.test`` (its robots.txt: ``robots``), then ``down.test/page``.

    down.test's robots.txt answers 503 every time, so it is unreachable
    whatever the timing (after :data:`GIVING_UP_SOON`'s half second).
    """
    mockserver.set_robots("a.test", Reply(body=robots))
    mockserver.set_robots("down.test", Reply(503, b"busy"))
    return [
        *(mockserver.url("a.test", path) for path in paths),
        mockserver.url("down.test", "/page"),
    ]


def stat(result: CrawlResult[Any], key: str) -> Any:
    return result.stats.get(f"robotrules/{key}", 0)


def paths(result: CrawlResult[Any], urls: Sequence[str]) -> list[str]:
    """The path and query of each URL, sorted: what a test compares."""
    return sorted(url.split("/", 3)[3] for url in urls)


def robots_log(mockserver: MockServer, host: str) -> list[RequestRecord]:
    return mockserver.requests_for(host, "/robots.txt")


def gaps(records: Sequence[RequestRecord]) -> list[float]:
    """Seconds between consecutive arrivals at the server.

    Only for lower bounds that hold by cause (a retry timed from the answer
    to the fetch before); pacing is checked on the download slot
    (``helpers.slots``), since a late arrival shortens the next gap.
    """
    return [later.time - earlier.time for earlier, later in itertools.pairwise(records)]


class ManualClock:
    """A time of day that moves only when the test moves it.

    :class:`StepSpider` makes it the crawl's ``RobotsManager.db.clock``, the
    one place the crawl reads the time of day: rules go stale, and an
    unreachable origin's time runs out, when a step says so, however slow
    the machine. Timers (retries, give-ups) still run on the loop's clock,
    and a give-up waits for this clock too.
    """

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


Step = str | float | Callable[["StepSpider"], object]
"""A URL to request; seconds that pass on the crawl's clock; or a callable run
with the spider (awaited if it returns an awaitable)."""


class StepSpider(RecordingSpider):
    """Runs ``steps`` in order, each once the one before is done.

    A URL step is done once its request was answered, failed or dropped;
    so the order of events is the test's, not the machine's. With
    ``clock`` (made when a step is a number), the crawl reads the time of
    day from it, and a number moves it on by that many seconds.
    """

    name = "steps"

    def __init__(
        self, steps: Sequence[Step] = (), clock: ManualClock | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.steps = list(steps)
        if clock is None and any(isinstance(step, float | int) for step in self.steps):
            clock = ManualClock()
        self.clock = clock
        self._pending: Deferred[None] | None = None

    async def start(self) -> AsyncIterator[Request]:
        clock = self.clock
        if clock is not None:
            self.manager().db.clock = clock
        for step in self.steps:
            if isinstance(step, str):
                done: Deferred[None] = Deferred()
                self._pending = done
                yield self.request(step)
                await maybe_deferred_to_future(done)
            elif isinstance(step, float | int):
                assert clock is not None
                clock.advance(step)
            else:
                result = step(self)
                if inspect.isawaitable(result):
                    await result

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.crawled.append(response.url)
        self._done()
        return iter(())

    def on_failure(self, url: str, failure: Failure) -> None:
        super().on_failure(url, failure)
        self._done()

    def on_dropped(self, request: Request) -> None:
        super().on_dropped(request)
        self._done()

    def _done(self) -> None:
        done, self._pending = self._pending, None
        if done is not None:
            done.callback(None)

    def manager(self) -> RobotsManager:
        """This crawl's robots.txt manager (only in crawls with this package)."""
        return RobotsManager.for_crawler(self.crawler)


def pause(seconds: float) -> Step:
    """A step: let at least ``seconds`` of real time pass (a lower bound, never a window)."""
    return lambda _: sleep(seconds)


async def settled(spider: StepSpider) -> None:
    """A step: wait until no robots.txt fetch is under way (a refresh a request started)."""
    await until(lambda: not spider.manager().parking.pending())


class ChainSpider(RecordingSpider):
    """Requests each URL of ``chain`` once the one before was answered or failed.

    The order of events is then the crawl's own: a request goes only after
    the rules that decided the one before were in (or the decision failed).
    """

    name = "chain"

    def __init__(self, chain: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.chain = list(chain)

    def request(self, url: str) -> Request:
        return Request(url, callback=self.parse, errback=partial(self.failed, url))

    async def start(self) -> AsyncIterator[Request]:
        for request in self._next():
            yield request

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.crawled.append(response.url)
        yield from self._next()

    def failed(self, url: str, failure: Failure) -> Iterator[Request]:
        self.on_failure(url, failure)
        yield from self._next()

    def _next(self) -> Iterator[Request]:
        if self.chain:
            yield self.request(self.chain.pop(0))
