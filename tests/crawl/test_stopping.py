"""Stopping a crawl: no robots.txt fetch or retry starts once the stop began.

A stop (one SIGINT, ``crawler.stop()``) closes the spider gracefully. Requests
parked for robots.txt then are saved with the scheduler's queue when there
is a ``JOBDIR`` (``saved_at_close``), and counted and logged otherwise
(``lost_at_close``); the fetches they waited for are not started.
"""

from __future__ import annotations

from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_from_coro

from tests.helpers.accounting import SavableSpider, identity_holds
from tests.helpers.crawling import async_test, call_later, run_spider
from tests.helpers.mockserver import MockServer, Reply, RequestRecord
from tests.helpers.variants import OURS, stat

CRAWL_TESTS = True


def stop_at(mockserver: MockServer, robots_requests: int, crawler: list[Crawler]) -> None:
    """Stop the crawl as the ``robots_requests``-th robots.txt request reaches the server."""

    def listen(record: RequestRecord) -> None:
        seen = [r for r in mockserver.requests if r.path == "/robots.txt"]
        if record.path == "/robots.txt" and len(seen) == robots_requests:
            call_later(0, stop)

    def stop() -> None:
        [running] = crawler
        stop_async = getattr(running, "stop_async", None)
        if stop_async is not None:
            deferred_from_coro(stop_async())
        else:  # Scrapy before 2.14
            running.stop()

    mockserver.listeners.append(listen)


@async_test
async def test_no_robots_txt_fetch_starts_after_a_stop(mockserver: MockServer) -> None:
    hosts = [f"site{n}.test" for n in range(20)]
    for host in hosts:
        mockserver.set_robots(host, Reply(hang=True))
    urls = [mockserver.url(host, f"/{page}") for host in hosts for page in range(3)]
    crawlers: list[Crawler] = []
    stop_at(mockserver, 2, crawlers)
    settings = {**OURS, "ROBOTRULES_CONCURRENT_FETCHES": 2, "DOWNLOAD_TIMEOUT": 1.0}
    result = await run_spider(SavableSpider, settings, start_urls=urls, crawlers=crawlers)
    assert result.stats.get("finish_reason") == "shutdown"
    # The two fetches under way when the stop came, and no other.
    assert len([r for r in mockserver.requests if r.path == "/robots.txt"]) == 2
    assert not [r for r in mockserver.requests if r.path != "/robots.txt"]
    # No JOBDIR: every parked request is counted and the loss logged (the
    # stop also ends the reading of the start requests: fewer than 60 came).
    assert stat(result, "lost_at_close") == stat(result, "offered") > 2
    assert identity_holds(result)
    assert result.messages("still waiting for robots.txt when the crawl closed")


@async_test
async def test_no_back_off_retry_starts_after_a_stop(mockserver: MockServer) -> None:
    mockserver.set_robots("dead.test", Reply(500))
    urls = [mockserver.url("dead.test", f"/{page}") for page in range(3)]
    crawlers: list[Crawler] = []
    stop_at(mockserver, 1, crawlers)
    settings = {**OURS, "ROBOTRULES_RETRY_DELAY": 0.1}
    result = await run_spider(SavableSpider, settings, start_urls=urls, crawlers=crawlers)
    assert result.stats.get("finish_reason") == "shutdown"
    assert len(mockserver.requests_for("dead.test", "/robots.txt")) == 1
    assert stat(result, "lost_at_close") == 3
    assert identity_holds(result)
