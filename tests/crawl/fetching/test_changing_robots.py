"""A robots.txt that changes under a real crawl, a pinned one, and Scrapy's own hooks.

A refresh that brings another file is told of (stat, WARNING with the rules
added and removed for the crawler's agent, ``robotrules_changed``, an audit
line with both SHA-256 values); ``ROBOTRULES_PINNED`` holds a site whose
live file is not the approved one; the ``robots_parsed`` parser answers
``sitemaps()``; the ``robotstxt_denied`` finish reason where Scrapy has it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import pytest

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.exceptions import RobotsTxtPinMismatch
from scrapy_robotrules.crawl.signals import robotrules_changed
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.stores import Record, open_backend
from tests.helpers.crawling import (
    ONE_POOL,
    RecordingSpider,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    not_reactorless,
    run_spider,
    through_proxy,
    until,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import (
    OURS,
    PRIVATE,
    Step,
    StepSpider,
    paths,
    pause,
    robots_log,
    settled,
    stat,
)

CRAWL_TESTS = True
"""Run under both reactors in CI."""

OLD = b"User-agent: *\nDisallow: /old\nDisallow: /kept\n\nUser-agent: otherbot\nDisallow: /x\n"
NEW = (
    b"User-agent: *\nDisallow: /kept\nDisallow: /new\nAllow: /new/open\n\n"
    b"User-agent: otherbot\nDisallow: /y\nDisallow: /z\n"
)
"""For ``*`` (the crawler's group): /new and /new/open added, /old removed; otherbot's
group changes too, which is no change for this crawler."""


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def on_changed(seen: list[dict[str, Any]]) -> Step:
    """A step: ``robotrules_changed`` is recorded into ``seen`` from now on."""

    def connect(spider: StepSpider) -> None:
        def record(**kwargs: Any) -> None:
            kwargs.pop("signal", None)
            kwargs.pop("sender", None)
            seen.append(kwargs)

        spider.crawler.signals.connect(record, signal=robotrules_changed, weak=False)

    return connect


def refresh_steps(host: str, mockserver: MockServer) -> list[Step]:
    """/a under the first file; past its age, /b starts the refresh; then /new and /old."""
    url = mockserver.url
    return [
        url(host, "/a"),
        0.5,
        url(host, "/b"),  # stale: decided by the first file while the second is fetched
        settled,
        url(host, "/new"),
        url(host, "/old"),
    ]


@async_test
async def test_a_refresh_that_brings_another_file_is_told_of(
    mockserver: MockServer, tmp_path: Path
) -> None:
    mockserver.set_robots("changing.test", Reply(body=OLD), Reply(body=NEW))
    seen: list[dict[str, Any]] = []
    trail = tmp_path / "audit.jsonl"
    settings = {**OURS, "ROBOTRULES_MAX_AGE": 0.3, "ROBOTRULES_AUDIT": str(trail)}
    steps = [on_changed(seen), *refresh_steps("changing.test", mockserver)]
    result = await run_spider(StepSpider, settings, steps=steps)
    origin = mockserver.url("changing.test", "/").rstrip("/")
    # The new file decides: /new is forbidden, /old allowed.
    assert paths(result, result.crawled) == ["a", "b", "old"]
    assert stat(result, "refreshed") == 1
    assert stat(result, "changed") == 1
    [warning] = result.messages("changed:", logging.WARNING)
    assert origin in warning
    assert "2 rules added and 1 removed" in warning
    [change] = seen
    assert change["origin"] == origin
    assert (change["old_sha256"], change["new_sha256"]) == (sha(OLD), sha(NEW))
    assert (change["added"], change["removed"]) == (2, 1)
    assert change["old"].allowed("/new", "scrapy")
    assert not change["old"].allowed("/old", "scrapy")
    assert not change["new"].allowed("/new", "scrapy")
    assert change["new"].allowed("/old", "scrapy")
    assert change["request"].url == mockserver.url("changing.test", "/b")
    lines = [json.loads(line) for line in trail.read_text("ascii").splitlines()]
    [line] = [line for line in lines if line["event"] == "change"]
    assert line["origin"] == origin
    assert (line["old_sha256"], line["new_sha256"]) == (sha(OLD), sha(NEW))
    assert (line["added"], line["removed"]) == (2, 1)
    fetches = [line["sha256"] for line in lines if line["event"] == "fetch"]
    assert fetches == [sha(OLD), sha(NEW)]  # the names the fetch lines give the two files


@async_test
async def test_a_refresh_that_brings_the_same_file_is_no_change(mockserver: MockServer) -> None:
    mockserver.set_robots("same.test", Reply(body=OLD), Reply(body=OLD))
    seen: list[dict[str, Any]] = []
    settings = {**OURS, "ROBOTRULES_MAX_AGE": 0.3}
    steps = [on_changed(seen), *refresh_steps("same.test", mockserver)]
    result = await run_spider(StepSpider, settings, steps=steps)
    assert paths(result, result.crawled) == ["a", "b", "new"]
    assert stat(result, "refreshed") == 1
    assert len(robots_log(mockserver, "same.test")) == 2
    assert stat(result, "changed") == 0
    assert seen == []
    assert result.messages("changed:") == []


@async_test
async def test_a_file_that_goes_away_is_no_change_of_file(mockserver: MockServer) -> None:
    mockserver.set_robots("gone.test", Reply(body=OLD), Reply(404, b"Not Found"))
    seen: list[dict[str, Any]] = []
    settings = {**OURS, "ROBOTRULES_MAX_AGE": 0.3}
    steps = [on_changed(seen), *refresh_steps("gone.test", mockserver)]
    result = await run_spider(StepSpider, settings, steps=steps)
    assert paths(result, result.crawled) == ["a", "b", "new", "old"]
    assert stat(result, "changed") == 0
    assert seen == []


# Pinned files (ROBOTRULES_PINNED).

HELD = {**OURS, "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.3}


@async_test
async def test_a_pinned_site_whose_file_matches_is_crawled(mockserver: MockServer) -> None:
    mockserver.set_robots("pinned.test", Reply(body=PRIVATE))
    urls = [mockserver.url("pinned.test", p) for p in ("/a", "/private")]
    settings = {**HELD, "ROBOTRULES_PINNED": {"pinned.test": sha(PRIVATE).upper()}}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]
    assert stat(result, "pinned/held") == 0
    assert result.messages("its pin") == []


@pytest.mark.parametrize(
    ("reply", "live"),
    [(Reply(body=OLD), sha(OLD)), (Reply(404, b"Not Found"), "no file (HTTP 404")],
    ids=["another-file", "no-file"],
)
@async_test
async def test_a_pinned_site_whose_file_differs_is_held_then_dropped(
    mockserver: MockServer, reply: Reply, live: str
) -> None:
    mockserver.set_robots("pinned.test", reply)
    urls = [mockserver.url("pinned.test", p) for p in ("/a", "/b")]
    origin = mockserver.url("pinned.test", "/").rstrip("/")
    # JSON text, as -s gives it; the origin's own key.
    settings = {**HELD, "ROBOTRULES_PINNED": json.dumps({origin: sha(PRIVATE)})}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == []
    assert sorted(result.ignored) == urls
    assert all(isinstance(exc, RobotsTxtPinMismatch) for _, exc in result.failures)
    why = str(result.failures[0][1])
    assert why.startswith("robots.txt differs from its pin")
    # Parked at least ROBOTRULES_UNREACHABLE_TIMEOUT (0.3 s), however much longer.
    assert re.search(rf": parked \d+\.\d s for {re.escape(origin)}/robots\.txt$", why), why
    assert (
        "its requests are parked" in result.messages("differs from its pin in", logging.WARNING)[0]
    )
    assert mockserver.requests_for("pinned.test", "/a") == []
    assert stat(result, "pinned/held") == 1
    assert stat(result, "pinned/dropped") == 2
    assert stat(result, "unreachable") == 2
    [warning] = result.messages("differs from its pin in ROBOTRULES_PINNED", logging.WARNING)
    assert origin in warning
    assert sha(PRIVATE) in warning
    assert live in warning
    [dropping] = result.messages("dropping 2 requests", logging.WARNING)
    assert "robots.txt differs from its pin" in dropping


@pytest.mark.parametrize(
    ("key", "host", "port"),
    [
        ("http://pina-1.test:80", "pina-1.test", False),  # the default port, written
        ("http://pina-2.test:080", "pina-2.test", False),  # with a leading zero
        ("bücher-3.test", "xn--bcher-3-n2a.test", True),  # IDNA
        ("http://pina-7.test:{port}", "pina-7.test.", True),  # the URLs with a final dot
    ],
    ids=["default-port", "leading-zero", "idna", "final-dot"],
)
@async_test
async def test_a_pin_written_otherwise_than_the_urls_holds_their_origin(
    mockserver: MockServer, key: str, host: str, port: bool
) -> None:
    # The live file is not the pinned one: the pin holds the site, then drops its requests.
    mockserver.set_robots(host, Reply(body=OLD))
    at = mockserver.url(host, "/").rstrip("/") if port else f"http://{host}"
    urls = [f"{at}/a", f"{at}/b"]
    pinned = {key.format(port=mockserver.port): sha(PRIVATE)}
    settings = {**HELD, **through_proxy(mockserver), "ROBOTRULES_PINNED": pinned}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert len(mockserver.requests_for(host, "/robots.txt")) >= 1  # the live file was read
    assert result.crawled == []
    assert sorted(result.ignored) == urls
    assert all(isinstance(exc, RobotsTxtPinMismatch) for _, exc in result.failures)
    assert mockserver.requests_for(host, "/a") == []
    assert stat(result, "pinned/held") == 1
    [warning] = result.messages("differs from its pin in ROBOTRULES_PINNED", logging.WARNING)
    assert f"robots.txt of {at} differs" in warning


@async_test
async def test_a_pinned_file_that_changes_under_the_crawl_holds_its_site(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("pinned.test", Reply(body=PRIVATE), Reply(body=OLD))
    url = mockserver.url
    steps: list[Step] = [
        url("pinned.test", "/a"),
        pause(0.4),  # past ROBOTRULES_MAX_AGE
        url("pinned.test", "/b"),  # stale: decided by the pinned file while the next comes
        settled,
        url("pinned.test", "/c"),  # the live file is not the pinned one: held, then dropped
    ]
    settings = {
        **HELD,
        "ROBOTRULES_MAX_AGE": 0.3,
        "ROBOTRULES_PINNED": {"pinned.test": sha(PRIVATE)},
    }
    result = await run_spider(StepSpider, settings, steps=steps)
    assert paths(result, result.crawled) == ["a", "b"]
    assert result.ignored == [url("pinned.test", "/c")]
    assert isinstance(result.failures[0][1], RobotsTxtPinMismatch)
    assert stat(result, "changed") == 1
    assert stat(result, "pinned/held") == 1
    assert len(result.messages("differs from its pin in ROBOTRULES_PINNED")) == 1


# Scrapy's own hooks.


@async_test
async def test_the_robots_parsed_parser_answers_sitemaps(mockserver: MockServer) -> None:
    if compat.ROBOTS_PARSED is None:
        pytest.skip("Scrapy before 2.18 sends no robots_parsed")
    robots = PRIVATE + b"Sitemap: /sitemap.xml\nSitemap: https://cdn.test/other.xml\n"
    mockserver.set_robots("maps.test", Reply(body=robots))
    parsers: list[Any] = []

    def connect(spider: StepSpider) -> None:
        spider.crawler.signals.connect(
            lambda robotparser, **_: parsers.append(robotparser),
            signal=compat.ROBOTS_PARSED,
            weak=False,
        )

    steps: list[Step] = [connect, mockserver.url("maps.test", "/a")]
    await run_spider(StepSpider, OURS, steps=steps)
    [parser] = parsers
    assert list(parser.sitemaps()) == [
        mockserver.url("maps.test", "/sitemap.xml"),
        "https://cdn.test/other.xml",
    ]


@pytest.mark.parametrize("supported", [True, False], ids=["scrapy-has-it", "scrapy-has-not"])
@async_test
async def test_robotstxt_denied_when_every_start_request_was_forbidden(
    mockserver: MockServer, monkeypatch: pytest.MonkeyPatch, supported: bool
) -> None:
    monkeypatch.setattr(compat, "ROBOTSTXT_DENIED", supported)
    mockserver.set_robots("deny.test", Reply(body=b"User-agent: *\nDisallow: /\n"))
    mockserver.set_robots("down.test", Reply(503, b"down"))
    urls = [mockserver.url("deny.test", "/a"), mockserver.url("deny.test", "/b")]
    unreachable = mockserver.url("down.test", "/c")  # not crawled either, and not denied
    result = await run_spider(RecordingSpider, HELD, start_urls=[*urls, unreachable])
    assert result.crawled == []
    assert stat(result, "forbidden") == 2
    expected = "robotstxt_denied" if supported else "finished"
    assert result.stats["finish_reason"] == expected
    assert len(result.messages("no start request could be crawled")) == int(supported)


@async_test
async def test_no_robotstxt_denied_when_a_start_request_was_crawled(
    mockserver: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compat, "ROBOTSTXT_DENIED", True)
    mockserver.set_robots("some.test", Reply(body=PRIVATE))
    urls = [mockserver.url("some.test", p) for p in ("/private", "/open")]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert result.crawled == [urls[1]]
    assert result.stats["finish_reason"] == "finished"


def test_the_finish_reason_follows_scrapys_own_middleware() -> None:
    """Scrapy gives ``robotstxt_denied`` where its middleware raises it (read from its code)."""
    from scrapy.downloadermiddlewares import robotstxt

    source = Path(robotstxt.__file__).read_text(encoding="utf-8")
    assert ('CloseSpider("robotstxt_denied")' in source) == compat.ROBOTSTXT_DENIED


@async_test
async def test_a_file_another_crawler_stored_is_a_change_where_it_replaces_one(
    mockserver: MockServer, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'fleet.db'}"
    mockserver.set_robots("fleet.test", Reply(body=OLD))
    origin = mockserver.url("fleet.test", "/").rstrip("/")
    seen: list[dict[str, Any]] = []

    def another_crawler_fetched_new(_: StepSpider) -> None:
        # What another crawler of the fleet saves when its refresh brings NEW.
        backend = open_backend(store)
        now = time.time()
        robots_url = f"{origin}/robots.txt"
        backend.save(Record(origin, Outcome.RULES, NEW, 200, robots_url, now, now + 60))
        backend.close()

    url = mockserver.url
    steps: list[Step] = [
        on_changed(seen),
        url("fleet.test", "/a"),
        pause(0.4),  # past ROBOTRULES_MAX_AGE: the next request asks the store
        another_crawler_fetched_new,
        url("fleet.test", "/new"),
        url("fleet.test", "/old"),
    ]
    settings = {**OURS, "ROBOTRULES_MAX_AGE": 0.3, "ROBOTRULES_STORE": store}
    result = await run_spider(StepSpider, settings, steps=steps)
    assert paths(result, result.crawled) == ["a", "old"]
    assert len(robots_log(mockserver, "fleet.test")) == 1  # NEW came from the store
    assert stat(result, "changed") == 1
    [change] = seen
    assert (change["old_sha256"], change["new_sha256"]) == (sha(OLD), sha(NEW))
    assert (change["added"], change["removed"]) == (2, 1)
    assert change["request"] is None


@not_reactorless(ONE_POOL)
@async_test
async def test_a_request_allowed_under_the_pinned_file_waits_parked_once_it_changed(
    mockserver: MockServer,
) -> None:
    host = "pinned.test"
    mockserver.set_robots(host, Reply(body=PRIVATE), Reply(body=OLD))
    mockserver.set_page(host, "/hold", Reply(hang=True), Reply())
    url = mockserver.url

    def schedule(*paths: str) -> Step:
        def crawl(spider: StepSpider) -> None:
            for path in paths:
                compat.engine(spider.crawler).crawl(spider.request(url(host, path)))  # type: ignore[union-attr]

        return crawl

    async def the_file_changed_then_hold_is_answered(spider: StepSpider) -> None:
        await until(lambda: len(robots_log(mockserver, host)) == 2)
        await until(lambda: not spider.manager().origins.fetching())
        await until(lambda: mockserver.holding(host, "/hold") == 1)
        mockserver.release(host, path="/hold")

    steps: list[Step] = [
        url(host, "/a"),
        # /hold takes the one download place; /b, allowed under the pinned file, waits
        # in the scheduler behind it.
        schedule("/b", "/hold"),  # the scheduler gives the last first: /hold
        pause(0.4),  # past ROBOTRULES_MAX_AGE
        schedule("/c"),  # stale: decided by the pinned file, which is fetched again: OLD
        the_file_changed_then_hold_is_answered,
    ]
    settings = {
        **HELD,
        "CONCURRENT_REQUESTS": 1,
        "ROBOTRULES_MAX_AGE": 0.3,
        "ROBOTRULES_PINNED": {host: sha(PRIVATE)},
        "DOWNLOAD_TIMEOUT": 30.0,
    }
    result = await run_spider(StepSpider, settings, steps=steps)
    assert paths(result, result.crawled) == ["a", "hold"]
    # Not downloaded under the file it was allowed by: held, then dropped.
    assert mockserver.requests_for(host, "/b") == []
    assert mockserver.requests_for(host, "/c") == []
    assert sorted(paths(result, result.ignored)) == ["b", "c"]
    assert all(isinstance(exc, RobotsTxtPinMismatch) for _, exc in result.failures)
