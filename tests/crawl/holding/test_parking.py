"""Decisions at scheduling time: requests waiting for robots.txt are parked, not queued.

A request whose origin has no rules yet waits outside the scheduler and the
downloader, so a slow robots.txt delays its own site only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import Response
from scrapy.utils.defer import deferred_from_coro

from scrapy_robotrules.crawl.fetching import download as download_module
from tests.helpers.accounting import identity_holds
from tests.helpers.crawling import (
    RecordingSpider,
    async_test,
    call_later,
    release_when,
    run_spider,
    when,
)
from tests.helpers.mockserver import MockServer, Reply, RequestRecord
from tests.helpers.variants import OURS, PRIVATE, robots_log, stat

CRAWL_TESTS = True

NARROW = {**OURS, "CONCURRENT_REQUESTS": 2, "CONCURRENT_REQUESTS_PER_DOMAIN": 2}
"""Two download slots in all: without parking, two waiting requests fill them."""


@async_test
async def test_a_slow_robots_txt_does_not_hold_the_other_sites_back(
    mockserver: MockServer,
) -> None:
    # slow.test's robots.txt is answered once every fast page was fetched:
    # had the requests waiting for it held the two download slots, the fast
    # pages could not have been.
    mockserver.set_robots("slow.test", Reply(hang=True), Reply(body=PRIVATE))
    mockserver.set_robots("fast.test", Reply(body=PRIVATE))
    slow = [mockserver.url("slow.test", f"/s{n}") for n in range(4)]
    fast = [mockserver.url("fast.test", f"/f{n}") for n in range(12)]
    released = release_when(mockserver, "fast.test", 12, partial(mockserver.release, "slow.test"))
    settings = {**NARROW, "DOWNLOAD_TIMEOUT": 20.0}
    result = await run_spider(RecordingSpider, settings, start_urls=[*slow, *fast])
    assert released[0]
    assert sorted(result.crawled) == sorted(slow + fast)
    assert len(robots_log(mockserver, "slow.test")) == 1
    # slow.test's four waited outside; fast.test's as long as its file took.
    assert 4 <= stat(result, "parked") <= 16
    assert stat(result, "offered") == 16
    assert stat(result, "allowed") == 16


@async_test
async def test_robots_txt_fetches_take_no_place_from_the_pages(mockserver: MockServer) -> None:
    # One place in all: a robots.txt fetch that took it would stop every
    # page of every site until slow.test answered.
    mockserver.set_robots("slow.test", Reply(hang=True), Reply(body=PRIVATE))
    fast = [mockserver.url("fast.test", f"/f{n}") for n in range(4)]
    released = release_when(mockserver, "fast.test", 4, partial(mockserver.release, "slow.test"))
    settings = {**OURS, "CONCURRENT_REQUESTS": 1, "DOWNLOAD_TIMEOUT": 20.0}
    result = await run_spider(
        RecordingSpider, settings, start_urls=[mockserver.url("slow.test", "/s"), *fast]
    )
    assert released[0], "the fast pages waited for slow.test's robots.txt fetch"
    assert len(result.crawled) == 5
    assert result.crawler.engine is None or result.crawler.engine.downloader.total_concurrency == 1


@async_test
async def test_robots_txt_fetches_under_way_at_once_are_bounded(mockserver: MockServer) -> None:
    hosts = [f"new{n}.test" for n in range(6)]
    for host in hosts:
        mockserver.set_robots(host, Reply(hang=True), Reply(body=PRIVATE))
    # The server holds each robots.txt, and answers the held ones only when
    # two are held: never were more than two under way.
    held: list[int] = []

    def listen(record: RequestRecord) -> None:
        if record.path != "/robots.txt":
            return
        held.append(sum(mockserver.holding(h) for h in hosts) + 1)
        if held[-1] == 2:
            call_later(0, lambda: [mockserver.release(h) for h in hosts])

    mockserver.listeners.append(listen)
    settings = {**OURS, "ROBOTRULES_CONCURRENT_FETCHES": 2, "DOWNLOAD_TIMEOUT": 20.0}
    result = await run_spider(
        RecordingSpider, settings, start_urls=[mockserver.url(h, "/a") for h in hosts]
    )
    assert len(result.crawled) == 6
    # Three waves of two.
    assert held == [1, 2, 1, 2, 1, 2]


@async_test
async def test_a_slow_robots_txt_gives_its_fetch_place_up(
    mockserver: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download_module, "SLOW_FETCH", 0.3)
    given_up: list[bool] = []
    give_up = download_module._Place.give_up

    def noting_give_up(place: download_module._Place) -> None:
        given_up.append(place.places is not None)
        give_up(place)

    monkeypatch.setattr(download_module._Place, "give_up", noting_give_up)
    mockserver.set_robots("slow.test", Reply(hang=True))
    mockserver.set_robots("live.test", Reply(body=PRIVATE))
    # When live.test's robots.txt arrives: is slow.test's fetch still under
    # way, and how many places were given back? Then slow.test answers.
    seen: list[tuple[int, list[bool]]] = []

    def listen(record: RequestRecord) -> None:
        if record.host == "live.test":
            seen.append((mockserver.holding("slow.test"), list(given_up)))
            call_later(0, mockserver.release, "slow.test", Reply(body=PRIVATE))

    mockserver.listeners.append(listen)
    settings = {**OURS, "ROBOTRULES_CONCURRENT_FETCHES": 1, "DOWNLOAD_TIMEOUT": 10.0}
    urls = [mockserver.url("slow.test", "/a"), mockserver.url("live.test", "/a")]
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert sorted(result.crawled) == sorted(urls)
    # One place: slow.test's fetch, still under way, had given it up (once,
    # SLOW_FETCH after it began) when live.test's fetch took it.
    assert seen[0] == (1, [True])
    assert len(robots_log(mockserver, "slow.test")) == 1


@async_test
async def test_the_spider_stays_open_while_requests_are_parked(mockserver: MockServer) -> None:
    # 503 first: the origin is unreachable, its request parked, and nothing
    # at all is downloading during the retry delay; the spider must not close.
    mockserver.set_robots("flaky.test", Reply(503), Reply(body=PRIVATE))
    pages = [mockserver.url("flaky.test", "/page"), mockserver.url("flaky.test", "/private/x")]
    settings: dict[str, Any] = {**OURS, "ROBOTRULES_RETRY_DELAY": 0.5}
    result = await run_spider(RecordingSpider, settings, start_urls=pages)
    assert result.crawled == [pages[0]]
    assert result.ignored == [pages[1]]
    assert len(robots_log(mockserver, "flaky.test")) == 2
    assert stat(result, "parked") == 2
    assert (stat(result, "allowed"), stat(result, "forbidden")) == (1, 1)


@async_test
async def test_requests_parked_past_the_unreachable_timeout_are_dropped_and_counted(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("down.test", Reply(500))
    pages = [mockserver.url("down.test", f"/{n}") for n in range(3)]
    settings: dict[str, Any] = {
        **OURS,
        "ROBOTRULES_RETRY_DELAY": 0.2,
        "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.6,
    }
    result = await run_spider(RecordingSpider, settings, start_urls=pages)
    assert result.crawled == []
    assert sorted(result.ignored) == sorted(pages)
    assert stat(result, "unreachable") == 3
    assert stat(result, "offered") == 3
    assert result.messages("robots.txt unreachable")


class PlainSpider(RecordingSpider):
    """Requests without an errback: dropped requests never reach the scheduler."""

    def request(self, url: str) -> Any:
        request = super().request(url)
        return request.replace(errback=None)


@async_test
async def test_counts_add_up_on_a_crawl_of_many_sites(mockserver: MockServer) -> None:
    urls: list[str] = []
    for site in range(30):
        host = f"site{site}.test"
        kind = site % 5
        if kind == 0:
            mockserver.set_robots(host, Reply(body=b"User-agent: *\nDisallow: /\n"))
        elif kind == 1:
            mockserver.set_robots(host, Reply(404))
        elif kind == 2:
            mockserver.set_robots(host, Reply(body=PRIVATE, delay=0.3))
        elif kind == 3:
            mockserver.set_robots(host, Reply(500))
        else:
            mockserver.set_robots(host, Reply(body=PRIVATE))
        for page in ("/a", "/private/b", "/a"):  # with a duplicate
            urls.append(mockserver.url(host, page))
    settings: dict[str, Any] = {
        **NARROW,
        # Only the 500s make an origin unreachable: a download slowed by a busy machine must not.
        "DOWNLOAD_TIMEOUT": 20.0,
        "ROBOTRULES_RETRY_DELAY": 0.2,
        "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.8,
    }
    result = await run_spider(PlainSpider, settings, start_urls=urls)
    enqueued = result.stats.get("scheduler/enqueued", 0)
    filtered = result.stats.get("dupefilter/filtered", 0)
    forbidden, unreachable = stat(result, "forbidden"), stat(result, "unreachable")
    # Every request offered ends as allowed, forbidden or unreachable; the
    # allowed ones entered the scheduler or were filtered there as duplicates.
    assert stat(result, "offered") == len(urls) == 90
    assert stat(result, "allowed") + forbidden + unreachable == 90
    assert enqueued + filtered == stat(result, "allowed")
    # Six sites of each kind; the second "/a" of each is a duplicate, decided
    # like the first: a forbidden duplicate is dropped as forbidden.
    assert (enqueued, filtered) == (6 * (0 + 2 + 1 + 0 + 1), 6 * 3)
    assert forbidden == 6 * (3 + 0 + 1 + 0 + 1)
    assert unreachable == 6 * 3
    assert len(result.crawled) == enqueued
    assert stat(result, "parked") > 0


class StoppingSpider(RecordingSpider):
    """Yields its URLs, then stops its own crawl once ``stop_once_parked`` requests are parked."""

    name = "stopping"

    def __init__(
        self, urls: Sequence[str] = (), stop_once_parked: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.urls = list(urls)
        self.stop_once_parked = stop_once_parked

    async def start(self) -> AsyncIterator[Request]:
        if self.stop_once_parked is not None:
            when(self.parked_enough, self.stop)
        for url in self.urls:
            # A spider method as callback: the request can be saved in JOBDIR.
            yield Request(url, callback=self.parse)

    def parse(self, response: Response) -> None:  # type: ignore[override]
        pass

    def parked_enough(self) -> bool:
        stats = self.crawler.stats
        assert stats is not None
        return int(stats.get_value("robotrules/parked", 0)) >= (self.stop_once_parked or 0)

    def stop(self) -> None:
        stop_async = getattr(self.crawler, "stop_async", None)  # Scrapy 2.14+
        if stop_async is None:
            self.crawler.stop()
        else:
            deferred_from_coro(stop_async())


@async_test
async def test_a_crawl_stopped_with_requests_parked_resumes_with_them(
    mockserver: MockServer, tmp_path: Path
) -> None:
    mockserver.set_robots("jobs.test", Reply(hang=True))
    urls = [mockserver.url("jobs.test", path) for path in ("/a", "/b", "/private/c")]
    settings: dict[str, Any] = {
        **OURS,
        "JOBDIR": str(tmp_path / "job"),
        # The hung robots.txt fetch ends the graceful stop when it times out.
        "DOWNLOAD_TIMEOUT": 2,
    }
    first = await run_spider(StoppingSpider, settings, urls=urls, stop_once_parked=3)
    assert first.stats.get("finish_reason") == "shutdown"
    assert stat(first, "parked") == 3
    pages = [r.path for r in mockserver.requests_for("jobs.test") if r.path != "/robots.txt"]
    assert pages == []
    # The parked requests were saved with the scheduler's queue.
    assert first.stats.get("scheduler/enqueued/disk", 0) == 3
    assert stat(first, "saved_at_close") == stat(first, "offered") == 3

    mockserver.set_robots("jobs.test", Reply(body=PRIVATE))
    second = await run_spider(StoppingSpider, settings)
    pages = [r.path for r in mockserver.requests_for("jobs.test") if r.path != "/robots.txt"]
    assert sorted(pages) == ["/a", "/b"]
    assert stat(second, "forbidden") == 1
    # Offered anew on resuming: the identity holds in each run.
    assert stat(second, "offered") == 3
    assert stat(second, "allowed") == 2
    assert second.stats.get("finish_reason") == "finished"


@pytest.mark.parametrize("spider_cls", [RecordingSpider, PlainSpider], ids=["errback", "plain"])
@async_test
async def test_a_redirect_waiting_for_its_targets_robots_txt_takes_no_download_place(
    mockserver: MockServer, spider_cls: type[RecordingSpider]
) -> None:
    # Two places, two pages that redirect to down.test. Its robots.txt
    # answers 503 first: the redirects, parked, are offered again and must
    # be parked again. Its next fetch is held until healthy.test's twenty
    # pages were fetched: had the redirects waited in the two places,
    # healthy.test's pages could not have been.
    mockserver.set_robots("down.test", Reply(503), Reply(hang=True), Reply(body=PRIVATE))
    mockserver.set_robots("from.test", Reply(body=PRIVATE))
    # healthy.test's pages come only once the redirects were offered again.
    mockserver.set_robots("healthy.test", Reply(hang=True), Reply(body=PRIVATE))

    def retried(record: RequestRecord) -> None:
        # down.test's second robots.txt fetch: the 503 woke the redirects.
        if record.host == "down.test" and len(robots_log(mockserver, "down.test")) == 2:
            call_later(0, mockserver.release, "healthy.test")

    mockserver.listeners.append(retried)
    targets = [mockserver.url("down.test", f"/t{n}") for n in range(2)]
    for n, target in enumerate(targets):
        mockserver.set_page("from.test", f"/r{n}", Reply(302, redirect_to=target))
    redirects = [mockserver.url("from.test", f"/r{n}") for n in range(2)]
    healthy = [mockserver.url("healthy.test", f"/h{n}") for n in range(20)]
    released: list[int] = []  # how many of down.test's robots.txt fetches were held then
    release_when(
        mockserver, "healthy.test", 20, lambda: released.append(mockserver.release("down.test"))
    )
    settings = {**NARROW, "DOWNLOAD_TIMEOUT": 20.0, "ROBOTRULES_UNREACHABLE_TIMEOUT": 60.0}
    result = await run_spider(spider_cls, settings, start_urls=[*redirects, *healthy])
    # down.test's robots.txt was still held when healthy.test's last page was asked for.
    assert released == [1]
    assert sorted(result.crawled) == sorted(healthy + targets)
    assert len(robots_log(mockserver, "down.test")) == 2
    assert stat(result, "offered") == 24
    assert stat(result, "allowed") == 24
    assert stat(result, "parked") >= 24
    assert identity_holds(result)
