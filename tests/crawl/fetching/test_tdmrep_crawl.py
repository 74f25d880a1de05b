"""tdmrep.json in real crawls: fetched once per origin, before the origin's pages, and obeyed.

A crawl declaring ``tdm`` in ROBOTRULES_PURPOSES fetches each origin's
``/.well-known/tdmrep.json`` after its robots.txt; the requests wait for
both, and those the file reserves are dropped before download. Missing,
broken and unreachable files reserve nothing; a stored record serves the
next crawl while fresh.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.engine.usage.preferences import TDMREP_FILE
from tests.helpers.accounting import identity_holds
from tests.helpers.crawling import (
    CrawlResult,
    Running,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
    when,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.usage import HTML, SETTINGS, UsageSpider, html

CRAWL_TESTS = True

HOST = "tdm.test"
TDMREP = "/.well-known/tdmrep.json"
FILE = json.dumps(
    [
        {"location": "/reserved/", "tdm-reservation": 1, "tdm-policy": "https://p.test/policy"},
        {"location": "/", "tdm-reservation": 0},
    ]
).encode()
JSON = {"Content-Type": "application/json"}

PAGES: dict[str, Reply] = {
    "/reserved/a": Reply(body=html(), headers=HTML),
    "/reserved/b": Reply(body=html(), headers={**HTML, "tdm-reservation": "0"}),
    "/open/a": Reply(body=html(), headers=HTML),
    # The header overrides the file's 0; the meta tag overrides the header (TDMRep §6.7).
    "/open/header": Reply(body=html(), headers={**HTML, "tdm-reservation": "1"}),
    "/open/meta": Reply(
        body=html(("tdm-reservation", "0")), headers={**HTML, "tdm-reservation": "1"}
    ),
}
TDM_SETTINGS = {"ROBOTRULES_PURPOSES": ["tdm"], "ROBOTRULES_USAGE_ITEMS": "drop"}


async def crawl(
    mockserver: MockServer, tdmrep: Reply | None, settings: dict[str, Any] | None = None
) -> CrawlResult[UsageSpider]:
    mockserver.set_robots(HOST, Reply(body=b"User-agent: *\nAllow: /\n"))
    if tdmrep is not None:
        mockserver.set_page(HOST, TDMREP, tdmrep)
    for path, reply in PAGES.items():
        mockserver.set_page(HOST, path, reply)
    urls = [mockserver.url(HOST, path) for path in PAGES]
    return await run_spider(
        UsageSpider, {**SETTINGS, **TDM_SETTINGS, **(settings or {})}, start_urls=urls
    )


def tdmrep_fetches(mockserver: MockServer) -> int:
    return len(mockserver.requests_for(HOST, TDMREP))


def pages_fetched(mockserver: MockServer) -> set[str]:
    return {r.path for r in mockserver.requests_for(HOST) if r.path in PAGES}


@async_test
async def test_a_reservation_in_the_file_drops_its_requests_before_download(
    mockserver: MockServer,
) -> None:
    result = await crawl(mockserver, Reply(body=FILE, headers=JSON))
    assert tdmrep_fetches(mockserver) == 1  # once for the origin, five pages
    # Every page waited for the file: none was requested before it.
    paths = [r.path for r in mockserver.requests_for(HOST)]
    assert paths[:2] == ["/robots.txt", TDMREP]
    # /reserved/ is reserved: never downloaded (its header saying 0 is never seen).
    assert pages_fetched(mockserver) == {"/open/a", "/open/header", "/open/meta"}
    stats = result.stats
    assert stats["robotrules/forbidden"] == 2
    assert stats["robotrules/usage/forbidden"] == 2
    assert stats["robotrules/usage/tdmrep/forbidden"] == 2
    assert stats["robotrules/usage/tdmrep/fetches"] == 1
    assert stats["robotrules/usage/tdmrep/request_count"] == 1
    assert stats["robotrules/usage/tdmrep/response_status_count/200"] == 1
    assert stats["robotrules/request_count"] == 1  # robots.txt's own count is robots.txt only
    assert identity_holds(result)
    reasons = {
        url.rsplit("/", 2)[-2] + "/" + url.rsplit("/", 1)[-1]: exc for url, exc in result.failures
    }
    assert "usage preferences refuse tdm by tdmrep.json" in str(reasons["reserved/a"])
    assert "tdmrep.json rule 1: location '/reserved/'" in str(reasons["reserved/a"])
    assert result.messages("Forbidden by robots.txt", logging.DEBUG)
    # The views carry the file's answer, and the header and meta overriding it.
    views = result.spider.views
    assert views["/open/a"].state("tdm") == "allowed"
    assert views["/open/a"].preferences["tdm"].sources[0].source == TDMREP_FILE
    assert views["/open/header"].state("tdm") == "disallowed"
    assert views["/open/header"].preferences["tdm"].sources[0].source == "header"
    assert views["/open/meta"].state("tdm") == "allowed"
    assert views["/open/meta"].preferences["tdm"].sources[0].source == "meta"
    # Only the header's reservation drops its items (ROBOTRULES_USAGE_ITEMS = drop).
    assert {item["url"] for item in result.spider.items} == {"/open/a", "/open/meta"}


@async_test
async def test_not_fetched_when_the_crawl_does_not_declare_tdm(mockserver: MockServer) -> None:
    result = await crawl(
        mockserver, Reply(body=FILE, headers=JSON), {"ROBOTRULES_PURPOSES": ["train-ai"]}
    )
    assert tdmrep_fetches(mockserver) == 0
    assert pages_fetched(mockserver) == set(PAGES)
    assert result.spider.views["/reserved/a"].state("tdm") == "unknown"
    assert "robotrules/usage/forbidden" not in result.stats
    assert identity_holds(result)


@async_test
async def test_a_missing_file_reserves_nothing(mockserver: MockServer) -> None:
    result = await crawl(mockserver, Reply(404, b"Not Found"))
    assert tdmrep_fetches(mockserver) == 1
    assert pages_fetched(mockserver) == set(PAGES)
    view = result.spider.views["/reserved/a"]
    assert view.state("tdm") == "unknown"
    assert "no tdmrep.json (HTTP 404): no reservation from it" in view.notes
    assert result.spider.views["/open/header"].state("tdm") == "disallowed"
    assert "robotrules/usage/forbidden" not in result.stats
    assert not result.messages("tdmrep.json", logging.WARNING)
    assert identity_holds(result)


@async_test
async def test_a_broken_file_reserves_nothing_with_a_warning(mockserver: MockServer) -> None:
    result = await crawl(
        mockserver, Reply(body=b'[{"location": "/", "tdm-reservation": 1', headers=JSON)
    )
    assert tdmrep_fetches(mockserver) == 1
    assert pages_fetched(mockserver) == set(PAGES)
    assert result.stats["robotrules/usage/tdmrep/broken"] == 1
    (warning,) = result.messages("tdmrep.json broken", logging.WARNING)
    assert "not JSON" in warning
    view = result.spider.views["/reserved/a"]
    assert view.state("tdm") == "unknown"
    assert any("not JSON" in note for note in view.notes)
    assert identity_holds(result)


@async_test
async def test_an_unreachable_file_leaves_tdm_unknown(mockserver: MockServer) -> None:
    # 500: unknown for now, never "reserved", never silently "not reserved".
    result = await crawl(mockserver, Reply(500, b"oops"), {"RETRY_ENABLED": False})
    assert tdmrep_fetches(mockserver) == 1
    assert pages_fetched(mockserver) == set(PAGES)  # unknown is no reservation
    stats = result.stats
    assert stats["robotrules/usage/tdmrep/unreachable"] == 1
    assert stats["robotrules/usage/tdmrep/unknown"] == len(PAGES)
    (warning,) = result.messages("tdmrep.json unreachable", logging.WARNING)
    assert "HTTP 500" in warning
    assert "tdm is unknown meanwhile" in warning
    view = result.spider.views["/reserved/a"]
    assert view.state("tdm") == "unknown"
    assert any("tdmrep.json unreachable (HTTP 500): tdm unknown for now" in n for n in view.notes)
    assert identity_holds(result)


@async_test
async def test_a_stored_file_is_not_fetched_again_while_fresh(
    mockserver: MockServer, tmp_path: Path
) -> None:
    settings = {"ROBOTRULES_STORE": f"sqlite://{tmp_path}/robots.db"}
    first = await crawl(mockserver, Reply(body=FILE, headers=JSON), settings)
    assert tdmrep_fetches(mockserver) == 1
    assert first.stats["robotrules/usage/tdmrep/forbidden"] == 2
    second = await crawl(mockserver, Reply(body=FILE, headers=JSON), settings)
    assert tdmrep_fetches(mockserver) == 1  # taken from the store
    assert len(mockserver.requests_for(HOST, "/robots.txt")) == 1
    assert second.stats["robotrules/usage/tdmrep/stored"] == 1
    assert second.stats["robotrules/usage/tdmrep/forbidden"] == 2
    assert "robotrules/usage/tdmrep/request_count" not in second.stats
    assert second.spider.views["/open/a"].state("tdm") == "allowed"
    assert identity_holds(second)


@async_test
async def test_a_fleet_fetches_the_file_once(mockserver: MockServer, redis_server: Any) -> None:
    """Two crawlers on one Redis server: one fetches tdmrep.json, the other takes its record."""
    settings = {"ROBOTRULES_STORE": redis_server.url}
    mockserver.set_robots(HOST, Reply(body=b"User-agent: *\nAllow: /\n"))
    mockserver.set_page(HOST, TDMREP, Reply(hang=True))
    for path, reply in PAGES.items():
        mockserver.set_page(HOST, path, reply)

    def answer() -> None:
        mockserver.set_page(HOST, TDMREP, Reply(body=FILE, headers=JSON))
        mockserver.release(HOST, Reply(body=FILE, headers=JSON), path=TDMREP)

    # The file is held until one crawler asks for it: the other meanwhile waits
    # on the lease or, later, finds the record.
    fired = when(lambda: mockserver.holding(HOST, TDMREP) == 1, answer)
    urls = [mockserver.url(HOST, path) for path in PAGES]
    runs = [
        Running(run_spider(UsageSpider, {**SETTINGS, **TDM_SETTINGS, **settings}, start_urls=urls))
        for _ in range(2)
    ]
    results: list[CrawlResult[UsageSpider]] = [await run for run in runs]
    assert fired[0]
    assert tdmrep_fetches(mockserver) == 1
    assert sorted(r.stats.get("robotrules/usage/tdmrep/request_count", 0) for r in results) == [
        0,
        1,
    ]
    assert sorted(r.stats.get("robotrules/usage/tdmrep/stored", 0) for r in results) == [0, 1]
    for result in results:
        assert result.stats["robotrules/usage/tdmrep/forbidden"] == 2
        assert identity_holds(result)


@async_test
async def test_parsed_files_are_bounded_in_bytes_as_well_as_in_count(
    mockserver: MockServer,
) -> None:
    # Two origins with a tdmrep.json of about 60 KB each, and a cache that
    # weighs one: the least recently used is dropped (fetched again when due).
    big = json.dumps(
        [{"location": f"/r{n:05d}/", "tdm-reservation": 1} for n in range(1500)]
        + [{"location": "/", "tdm-reservation": 0}]
    ).encode()
    hosts = ["one.test", "two.test"]
    for host in hosts:
        mockserver.set_robots(host, Reply(body=b"User-agent: *\nAllow: /\n"))
        mockserver.set_page(host, TDMREP, Reply(body=big, headers=JSON))
        mockserver.set_page(host, "/open", Reply(body=html(), headers=HTML))
    limit = 150_000
    settings = {**SETTINGS, **TDM_SETTINGS, "ROBOTRULES_CACHE_BYTES": limit}
    result = await run_spider(
        UsageSpider, settings, start_urls=[mockserver.url(h, "/open") for h in hosts]
    )
    assert len(result.crawled) == 2
    assert all(len(mockserver.requests_for(h, TDMREP)) == 1 for h in hosts)
    files = RobotsManager.for_crawler(result.crawler).tdmrep
    assert files is not None
    assert len(big) > 60_000
    assert files.weight <= limit
    assert sum(files.entry(f"http://{h}:{mockserver.port}") is not None for h in hosts) == 1
