"""A Redis store that evicts keys (``maxmemory-policy`` other than ``noeviction``): never silent.

Fleet-wide Crawl-delay lives in pace keys; a server that may evict them
forgets turns. The crawler says so at start-up (a WARNING and the stat
``robotrules/store/may_evict``) and keeps the delay on its own download
slots as well. Eviction under memory pressure is not waited for: the test
server deletes the pace keys itself as each page request arrives.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy import Request
from scrapy.http import Response

from scrapy_robotrules.engine.stores import open_backend
from tests.helpers.crawling import RecordingSpider, async_test, run_spider
from tests.helpers.mockserver import MockServer, Reply, RequestRecord
from tests.helpers.redisserver import RedisServer
from tests.helpers.slots import SLOT_LOG, assert_released_apart, pages_released
from tests.helpers.variants import OURS, stat

CRAWL_TESTS = True

PAGES = 5


def _server(directory: Path, *arguments: str) -> Iterator[RedisServer]:
    server = RedisServer(directory, arguments)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def evicting_redis(tmp_path: Path) -> Iterator[RedisServer]:
    yield from _server(tmp_path, "--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru")


class Forgetful:
    """Deletes every pace key of ``client``'s Redis as each page request reaches ``server``."""

    def __init__(self, server: MockServer, client: redis.Redis) -> None:
        self.client = client
        self.deleted = 0
        server.listeners.append(self.forget)

    def forget(self, record: RequestRecord) -> None:
        if record.path != "/robots.txt":
            for key in self.client.scan_iter(match="robotrules:pace:*"):
                self.deleted += self.client.delete(key)


class ChainSpider(RecordingSpider):
    """Requests /0, then /1 once /0 answered, and so on: each turn booked after the last visit."""

    name = "chain"

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.crawled.append(response.url)
        number = int(response.url.rsplit("/", 1)[1])
        if number + 1 < PAGES:
            yield self.request(response.urljoin(f"/{number + 1}"))


@async_test
async def test_an_evicting_redis_is_reported_and_crawl_delay_still_holds(
    evicting_redis: RedisServer, mockserver: MockServer
) -> None:
    client = redis.Redis.from_url(evicting_redis.url)
    forgetful = Forgetful(mockserver, client)
    mockserver.set_robots("delayed.test", Reply(body=b"User-agent: *\nCrawl-delay: 1\n"))
    settings = {**OURS, "ROBOTRULES_STORE": evicting_redis.url, **SLOT_LOG}
    start = [mockserver.url("delayed.test", "/0")]
    result = await run_spider(ChainSpider, settings, start_urls=start)
    assert len(result.crawled) == PAGES
    assert forgetful.deleted >= PAGES - 1  # every turn booked so far was forgotten
    # The slot kept the delay itself: it let each page go 1 s after the one before.
    assert_released_apart(pages_released(result.crawler, "delayed.test"), 1.0)
    assert stat(result, "store/may_evict") == 1
    [warning] = result.messages("fleet-wide Crawl-delay turns may be lost", logging.WARNING)
    assert "maxmemory-policy is allkeys-lru: it evicts keys" in warning
    assert "***" not in warning  # no password here, and nothing shown as one


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ((), None),  # redis-server's default: noeviction
        (
            ("--maxmemory-policy", "volatile-lru"),
            "maxmemory-policy is volatile-lru: it evicts keys",
        ),
        (("--maxmemory-policy", "allkeys-random"), "maxmemory-policy is allkeys-random"),
        (("--rename-command", "CONFIG", ""), "maxmemory-policy cannot be read (CONFIG GET: "),
    ],
)
def test_the_policy_is_read_or_said_unreadable(
    tmp_path: Path, arguments: tuple[str, ...], expected: str | None
) -> None:
    for server in _server(tmp_path, *arguments):
        found = open_backend(server.url).eviction()
        if expected is None:
            assert found is None
        else:
            assert found is not None
            assert found.startswith(expected), found
            assert found.endswith(" keys")
    assert open_backend(f"sqlite://{tmp_path}/robots.db").eviction() is None
