"""The Spidermon monitors (the ``spidermon`` extra), run by real Spidermon in real crawls.

For each monitor, a crawl that fails it and the same crawl with its
threshold raised, which passes; and a healthy crawl that passes them all.
Spidermon's own result (each monitor's status, as its log lines show it) is
recorded by an action of the suite the tests add, exactly as a project adds it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_from_coro
from spidermon.core.actions import Action

from scrapy_robotrules.crawl.monitors import RobotRulesMonitorSuite
from tests.helpers.crawling import (
    RecordingSpider,
    async_test,
    call_later,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply, RequestRecord
from tests.helpers.variants import BUILTIN, OURS, PRIVATE

CRAWL_TESTS = True
ROOT = Path(__file__).resolve().parents[2]

UNREACHABLE = "robots.txt: unreachable origins/Origins left unreachable"
LOST = "robots.txt: requests not decided/Requests lost at close"
UNCHECKED = "robots.txt: requests not decided/Requests unchecked"
FORBIDDEN = "robots.txt: forbidden share/Share of requests forbidden"
ERRORS = "robots.txt: fetch errors/robots.txt fetch errors"
MONITORS = (UNREACHABLE, LOST, UNCHECKED, FORBIDDEN, ERRORS)


class RecordResults(Action):  # type: ignore[misc]
    """Keeps Spidermon's status of each monitor on the crawler, for the test to read."""

    def run_action(self) -> None:
        self.data.crawler.monitor_results = {
            result.item.name: result.status for result in self.result.monitor_results
        }


class RecordedSuite(RobotRulesMonitorSuite):
    monitors_finished_actions = [RecordResults]  # noqa: RUF012  (Spidermon's idiom)


SPIDERMON: dict[str, Any] = {
    "SPIDERMON_ENABLED": True,
    "EXTENSIONS": {"spidermon.contrib.scrapy.extensions.Spidermon": 500},
    "SPIDERMON_SPIDER_CLOSE_MONITORS": (f"{__name__}.RecordedSuite",),
}


async def monitored(spider: type[RecordingSpider], settings: dict[str, Any], **kwargs: Any) -> Any:
    """The crawl's result and Spidermon's status of each monitor."""
    result = await run_spider(spider, {**SPIDERMON, **settings}, **kwargs)
    statuses: dict[str, str] = getattr(result.crawler, "monitor_results", {})
    return result, statuses


def failing(statuses: dict[str, str]) -> list[str]:
    assert sorted(statuses) == sorted(MONITORS), statuses
    return sorted(name for name, status in statuses.items() if status not in ("OK", "SKIPPED"))


@async_test
async def test_a_healthy_crawl_passes_every_monitor(mockserver: MockServer) -> None:
    mockserver.set_robots("rules.test", Reply(200, PRIVATE))
    mockserver.set_pages("rules.test", links=["/a", "/b", "/private/x"])
    url = mockserver.url("rules.test", "/")
    result, statuses = await monitored(RecordingSpider, OURS, start_urls=[url], follow=True)
    assert result.ignored  # a share of requests was forbidden, under the threshold
    assert failing(statuses) == []
    assert set(statuses.values()) == {"OK"}
    assert result.messages("[Spidermon] robots.txt: forbidden share/Share of requests forbidden")


@pytest.mark.parametrize("raised", [False, True])
@async_test
async def test_origins_left_unreachable(mockserver: MockServer, raised: bool) -> None:
    mockserver.set_robots("busy.test", Reply(503, b"busy"))
    settings = {
        **OURS,
        "ROBOTRULES_UNREACHABLE_TIMEOUT": 0,
        "ROBOTRULES_SPIDERMON_MAX_FETCH_ERRORS": 10,
    }
    if raised:
        settings["ROBOTRULES_SPIDERMON_MAX_UNREACHABLE_ORIGINS"] = 1
    url = mockserver.url("busy.test", "/")
    result, statuses = await monitored(RecordingSpider, settings, start_urls=[url])
    assert result.stats["robotrules/origins/unreachable_at_close"] == 1
    assert failing(statuses) == ([] if raised else [UNREACHABLE])
    if not raised:
        assert result.messages(
            "1 origins' robots.txt left unreachable (robotrules/origins/unreachable_at_close),"
            " more than ROBOTRULES_SPIDERMON_MAX_UNREACHABLE_ORIGINS = 0"
        )


@pytest.mark.parametrize("raised", [False, True])
@async_test
async def test_robots_txt_fetch_errors(mockserver: MockServer, raised: bool) -> None:
    # Unreachable once, then fetched: the origin recovers, the error stays counted.
    mockserver.set_robots("flaky.test", Reply(503, b"busy"), Reply(200, PRIVATE))
    settings = {**OURS, "ROBOTRULES_RETRY_DELAY": 0.1}
    if raised:
        settings["ROBOTRULES_SPIDERMON_MAX_FETCH_ERRORS"] = 1
    url = mockserver.url("flaky.test", "/")
    result, statuses = await monitored(RecordingSpider, settings, start_urls=[url])
    assert result.crawled == [url]
    assert failing(statuses) == ([] if raised else [ERRORS])


@pytest.mark.parametrize("raised", [False, True])
@async_test
async def test_forbidden_share(mockserver: MockServer, raised: bool) -> None:
    mockserver.set_robots("closed.test", Reply(200, b"User-agent: *\nDisallow: /\n"))
    settings = dict(OURS)
    if raised:
        settings["ROBOTRULES_SPIDERMON_MAX_FORBIDDEN_RATIO"] = 1
    urls = [mockserver.url("closed.test", path) for path in ("/", "/a")]
    result, statuses = await monitored(RecordingSpider, settings, start_urls=urls)
    assert result.stats["robotrules/forbidden"] == 2
    assert failing(statuses) == ([] if raised else [FORBIDDEN])


class UncheckedSpider(RecordingSpider):
    """One request of its own with ``dont_obey_robotstxt``."""

    name = "unchecked"

    async def start(self) -> AsyncIterator[Request]:
        async for request in super().start():
            request.meta["dont_obey_robotstxt"] = True
            yield request


@pytest.mark.parametrize("raised", [False, True])
@async_test
async def test_requests_unchecked(mockserver: MockServer, raised: bool) -> None:
    settings = dict(OURS)
    if raised:
        settings["ROBOTRULES_SPIDERMON_MAX_UNCHECKED_REQUESTS"] = 1
    url = mockserver.url("any.test", "/")
    result, statuses = await monitored(UncheckedSpider, settings, start_urls=[url])
    assert result.crawled == [url]
    assert failing(statuses) == ([] if raised else [UNCHECKED])


def stop_at_robots_request(mockserver: MockServer, crawlers: list[Crawler]) -> None:
    """Stop the crawl as its robots.txt request reaches the server (which holds it)."""

    def stop() -> None:
        [running] = crawlers
        stop_async = getattr(running, "stop_async", None)
        if stop_async is not None:
            deferred_from_coro(stop_async())
        else:  # Scrapy before 2.14
            running.stop()

    def listen(record: RequestRecord) -> None:
        if record.path == "/robots.txt":
            call_later(0, stop)

    mockserver.listeners.append(listen)


@pytest.mark.parametrize("raised", [False, True])
@async_test
async def test_requests_lost_at_close(mockserver: MockServer, raised: bool) -> None:
    mockserver.set_robots("slow.test", Reply(hang=True))
    crawlers: list[Crawler] = []
    stop_at_robots_request(mockserver, crawlers)
    # The held fetch times out as the crawl closes: an error, its origin unreachable.
    settings = {
        **OURS,
        "ROBOTRULES_SPIDERMON_MAX_FETCH_ERRORS": 10,
        "ROBOTRULES_SPIDERMON_MAX_UNREACHABLE_ORIGINS": 10,
    }
    if raised:
        settings["ROBOTRULES_SPIDERMON_MAX_LOST_REQUESTS"] = 3
    urls = [mockserver.url("slow.test", f"/{page}") for page in range(3)]
    result, statuses = await monitored(
        RecordingSpider, settings, start_urls=urls, crawlers=crawlers
    )
    assert result.stats["finish_reason"] == "shutdown"
    assert result.stats["robotrules/lost_at_close"] == 3
    assert failing(statuses) == ([] if raised else [LOST])


@async_test
async def test_monitors_run_before_the_stats_are_final_fail_saying_so(
    mockserver: MockServer,
) -> None:
    url = mockserver.url("any.test", "/")
    # Spidermon's extension built before this package's (priority 0): its
    # monitors would run on figures not yet final.
    early = {**SPIDERMON["EXTENSIONS"], "spidermon.contrib.scrapy.extensions.Spidermon": -1}
    result, statuses = await monitored(
        RecordingSpider, {**OURS, "EXTENSIONS": early}, start_urls=[url]
    )
    assert failing(statuses) == sorted(MONITORS)
    assert result.messages("scrapy-robotrules' stats are not final")
    # Scrapy's own middleware: no such stats either.
    result, statuses = await monitored(RecordingSpider, BUILTIN, start_urls=[url])
    assert failing(statuses) == sorted(MONITORS)
    # A crawl that does not obey robots.txt: nothing to monitor.
    result, statuses = await monitored(
        RecordingSpider, {**OURS, "ROBOTSTXT_OBEY": False}, start_urls=[url]
    )
    assert set(statuses.values()) == {"SKIPPED"}


def test_without_spidermon_the_package_imports_and_the_monitors_say_what_to_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['spidermon'] = None  # as if it were not installed\n"
        "import scrapy_robotrules, scrapy_robotrules.crawl.addon\n"
        "try:\n"
        "    import scrapy_robotrules.crawl.monitors\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "pip install 'spidermon>=1.20'" in done.stdout
