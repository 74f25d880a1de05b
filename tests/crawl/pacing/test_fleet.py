"""Shared and persistent stores in real crawls: a fleet on Redis, restarts on SQLite, Redis dying.

Fleets also run on a Redis Cluster and on a Sentinel group, each failing over mid-crawl.

The fleet test runs four Scrapy processes (``fleet_worker.py``) against the
test server in this process, with a real ``redis-server`` between them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import pytest
import redis

from scrapy_robotrules.engine.stores import open_backend
from tests.helpers import REPO_ROOT
from tests.helpers.crawling import RecordingSpider, Running, async_test, run_spider, sleep, until
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.redisserver import ClusterServers, RedisServer, SentinelGroup, replicated
from tests.helpers.turns import Turn, assert_turns_apart
from tests.helpers.variants import OURS, PRIVATE, paths, robots_log, stat

CRAWL_TESTS = True

WORKER = "tests.helpers.fleet_worker"
WORKERS = 4
SITES = 50
DELAYED = "delayed.test"
"""The site whose robots.txt says ``Crawl-delay: 1``."""


def _one_of_three_kinds(
    mockserver: MockServer,
    n: int,
    host: str,
    paths: tuple[str, ...],
    *,
    private: str,
    fleetbot: str,
) -> tuple[set[str], set[str]]:
    """Script ``host`` as the ``n``-th site of three kinds; the URLs of ``paths`` it allows and
    forbids: every agent kept from ``private`` (``PRIVATE``), fleetbot kept from ``fleetbot``,
    or no robots.txt (404, everything allowed)."""
    pages = {path: mockserver.url(host, path) for path in paths}
    kind = n % 3
    if kind == 0:
        mockserver.set_robots(host, Reply(body=PRIVATE))
        forbidden = {pages.pop(private)}
    elif kind == 1:
        mockserver.set_robots(
            host, Reply(body=f"User-agent: fleetbot\nDisallow: {fleetbot}\n".encode())
        )
        forbidden = {pages.pop(fleetbot)}
    else:
        forbidden = set()
    return set(pages.values()), forbidden


def _sites(mockserver: MockServer) -> tuple[list[str], dict[str, Reply]]:
    """50 sites of three kinds, each with two pages and one forbidden link; and DELAYED.

    Also the robots.txt answers held back (see ``_run_workers``).
    """
    hosts = [f"site{n}.test" for n in range(SITES)]
    held = {}
    for n, host in enumerate(hosts):
        kind = n % 3
        if kind == 0:
            # Held until every crawler waits for it: the lease path, always.
            mockserver.set_robots(host, Reply(hang=True))
            held[host] = Reply(body=PRIVATE)
        elif kind == 1:
            mockserver.set_robots(host, Reply(body=b"User-agent: fleetbot\nDisallow: /b\n"))
        # kind 2: no robots.txt (404), everything allowed
        mockserver.set_pages(host, ["/a", "/b", "/private/c"])
    mockserver.set_robots(DELAYED, Reply(body=b"User-agent: *\nCrawl-delay: 1\n" + PRIVATE[14:]))
    mockserver.set_pages(DELAYED, ["/a", "/b", "/private/c"])
    return [mockserver.url(host) for host in [*hosts, DELAYED]], held


def _waiting(directory: Path, count: int, origin: str) -> int:
    """How many workers have found the fetch lease on ``origin`` taken (``fleet_worker.py``)."""
    logs = [directory / f"worker{n}.waiting" for n in range(count)]
    return sum(log.exists() and origin in log.read_text().split() for log in logs)


async def _run_workers(
    mockserver: MockServer,
    directory: Path,
    count: int,
    start_urls: list[str],
    settings: dict[str, Any],
    *,
    held: Mapping[str, Reply] = MappingProxyType({}),
    options: Mapping[str, Any] = MappingProxyType({}),
    on_poll: Callable[[], object] | None = None,
) -> list[dict[str, Any]]:
    """Run ``count`` fleet workers at once; their results, in order.

    ``options`` go to each worker's configuration (see ``fleet_worker.py``);
    ``on_poll`` is called each time the test looks at the fleet (ten times a
    second), in the test server's reactor.

    The robots.txt of each host in ``held`` hangs (``Reply(hang=True)``)
    until one worker is fetching it and every other one has found its lease
    taken, and is then answered with the reply given: so the others always
    wait on that fetch, however the processes happen to be scheduled.
    """
    held = dict(held)
    config = directory / "config.json"
    config.write_text(json.dumps({"start_urls": start_urls, "settings": settings, **options}))
    outputs = [directory / f"worker{n}.json" for n in range(count)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", WORKER, str(config), str(output)],
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=open(directory / f"worker{n}.log", "w"),  # noqa: SIM115
        )
        for n, output in enumerate(outputs)
    ]
    deadline = time.monotonic() + 120
    while any(p.poll() is None for p in processes):
        for host, reply in list(held.items()):
            origin = mockserver.url(host).rstrip("/")
            if robots_log(mockserver, host) and _waiting(directory, count, origin) == count - 1:
                mockserver.release(host, reply)
                del held[host]
        if on_poll is not None:
            on_poll()
        if time.monotonic() > deadline:
            for p in processes:
                p.kill()
            raise AssertionError(f"the fleet was still crawling after 120 s (held: {held})")
        await sleep(0.1)  # the test server answers meanwhile, in this reactor
    for n, process in enumerate(processes):
        log = (directory / f"worker{n}.log").read_text()
        assert process.returncode == 0, log[-3000:]
    return [json.loads(output.read_text()) for output in outputs]


def _assert_paced(
    mockserver: MockServer, fleet: list[dict[str, Any]], host: str, *, delay: float, pages: int
) -> None:
    """The fleet's turns on ``host`` are ``delay`` apart, and no page went before a turn of its own.

    Checked from what the crawlers booked and when they let each page go
    (``fleet_worker.py``), not from when the pages reached the server: that
    also depends on how busy the machine is.
    """
    origin = mockserver.url(host).rstrip("/")
    turns = assert_turns_apart(
        (Turn(*turn) for result in fleet for turn in result["turns"].get(origin, [])), delay
    )
    released = sorted(time for result in fleet for time in result["released"].get(origin, []))
    assert len(released) == pages, released
    # In time order, the n-th page let go at or after the n-th turn: each had one of its own.
    for let_go, turn in zip(released, turns, strict=False):
        assert let_go >= turn.earliest - 1e-3, (let_go, turn)


def _decisions(result: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    return sorted(result["crawled"]), result["forbidden"]


FLEET_SETTINGS: dict[str, Any] = {
    "ROBOTRULES_USER_AGENT": "fleetbot",
    "CONCURRENT_REQUESTS": 32,
}


@pytest.mark.parametrize("store", ["redis", "sqlite"])
@async_test
async def test_a_fleet_fetches_each_robots_txt_once_and_keeps_crawl_delay_together(
    mockserver: MockServer, store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Four crawlers on one Redis server, or on one SQLite file (one machine)."""
    if store == "redis":
        url = request.getfixturevalue("redis_server").url
    else:
        url = f"sqlite://{tmp_path}/robots.db"
    start_urls, held = _sites(mockserver)
    settings = {**FLEET_SETTINGS, "ROBOTRULES_STORE": url}
    fleet = await _run_workers(mockserver, tmp_path, WORKERS, start_urls, settings, held=held)

    hosts = [f"site{n}.test" for n in range(SITES)] + [DELAYED]
    fetches = {host: len(robots_log(mockserver, host)) for host in hosts}
    assert fetches == dict.fromkeys(hosts, 1)  # once in all, not once per crawler
    keys = {key for result in fleet for key in result["stats"]}
    total = {key: sum(r["stats"].get(key, 0) for r in fleet) for key in keys}
    assert total["robotrules/request_count"] == len(hosts)
    # Every other crawler took each origin from the store: found there, or
    # waited for the crawler that held the fetch lease.
    shared = total.get("robotrules/store/hits", 0) + total.get("robotrules/fleet/waited", 0)
    assert shared == (WORKERS - 1) * len(hosts)
    # The lease path, not only the store: the held files were waited for.
    assert total.get("robotrules/fleet/waited", 0) >= (WORKERS - 1) * len(held)
    assert total.get("robotrules/store/errors", 0) == 0

    # The fleet together kept the delayed site's Crawl-delay: 1.
    visits = mockserver.requests_for(DELAYED)
    assert len(visits) == 1 + WORKERS * 3  # robots.txt, then three pages per crawler
    _assert_paced(mockserver, fleet, DELAYED, delay=1.0, pages=WORKERS * 3)

    # Each crawler decided every URL as one crawler alone decides it.
    single_dir = tmp_path / "single"
    single_dir.mkdir()
    [single] = await _run_workers(mockserver, single_dir, 1, start_urls, {**FLEET_SETTINGS})
    crawled, forbidden = _decisions(single)
    # 17 + 17 sites with one forbidden page of four, 16 with none, DELAYED with one.
    assert (len(crawled), len(forbidden)) == (17 * 3 + 17 * 3 + 16 * 4 + 3, 17 + 17 + 1)
    for result in fleet:
        assert _decisions(result) == (crawled, forbidden)


def _scripts_run(client: redis.Redis) -> int:
    """Lua scripts the Redis server has run: before a fetch, only lease attempts."""
    stats = client.info("commandstats").get("cmdstat_evalsha", {})
    return int(stats.get("calls", 0)) - int(stats.get("failed_calls", 0))  # less NOSCRIPT


@async_test
async def test_a_crashed_lease_holder_delays_the_fetch_only_until_its_lease_expires(
    mockserver: MockServer, redis_server: RedisServer
) -> None:
    mockserver.set_robots("crash.test", Reply(body=PRIVATE))
    # A crawler took the lease on crash.test, then died.
    client = redis.Redis.from_url(redis_server.url)
    lease = f"robotrules:lease:{{http://crash.test:{mockserver.port}}}"
    client.set(lease, "dead", px=60_000)
    pages = [mockserver.url("crash.test", "/a"), mockserver.url("crash.test", "/private/b")]
    settings = {**OURS, "ROBOTRULES_STORE": redis_server.url}
    crawl = Running(run_spider(RecordingSpider, settings, start_urls=pages))
    while _scripts_run(client) < 2 and not crawl.done:  # found it taken, asked again
        await sleep(0.05)
    assert not robots_log(mockserver, "crash.test")
    # Its lease runs out (as if its 60 s were over): 0.3 s from now.
    expires = time.monotonic()
    client.pexpire(lease, 300)
    result = await crawl
    [fetch] = robots_log(mockserver, "crash.test")
    assert fetch.time - expires > 0.25  # not before
    assert result.crawled == [pages[0]]
    assert result.ignored == [pages[1]]


@async_test
async def test_a_restarted_crawl_fetches_no_fresh_robots_txt_again(
    mockserver: MockServer, tmp_path: Path
) -> None:
    hosts = [f"r{n}.test" for n in range(5)]
    for host in hosts:
        mockserver.set_robots(host, Reply(body=PRIVATE))
    mockserver.set_robots("brief.test", Reply(body=PRIVATE))
    urls = [mockserver.url(h, p) for h in [*hosts, "brief.test"] for p in ("/a", "/private/b")]
    store = f"sqlite://{tmp_path}/robots.db"
    settings = {**OURS, "ROBOTRULES_STORE": store}
    first = await run_spider(RecordingSpider, settings, start_urls=urls)
    # brief.test's file goes stale before the restart (set in the store, not
    # waited for: a short max-age could also run out during the first crawl).
    backend = open_backend(store)
    brief = backend.load(mockserver.url("brief.test").rstrip("/"))
    assert brief is not None
    backend.save(brief._replace(fresh_until=time.time() - 1))
    backend.close()
    second = await run_spider(RecordingSpider, settings, start_urls=urls)

    for host in hosts:
        assert len(robots_log(mockserver, host)) == 1
    assert len(robots_log(mockserver, "brief.test")) == 2  # stale by then
    assert stat(first, "store/misses") == 6
    assert stat(second, "store/hits") == 5
    assert stat(second, "request_count") == 1
    for result in (first, second):
        assert paths(result, result.crawled) == ["a"] * 6
        assert paths(result, result.ignored) == ["private/b"] * 6


@async_test
async def test_redis_killed_mid_crawl_the_crawl_finishes_on_memory(
    mockserver: MockServer, redis_server: RedisServer
) -> None:
    # Five sites found first; each links to pages of five more, found only
    # after Redis is gone: the first pages are held (their robots.txt went
    # through Redis) until Redis was killed.
    later = [f"later{n}.test" for n in range(5)]
    first = [f"first{n}.test" for n in range(5)]
    for host in first + later:
        mockserver.set_robots(host, Reply(body=PRIVATE))
    links = [mockserver.url(h, p) for h in later for p in ("/a", "/private/b")]
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    page = Reply(body=anchors.encode(), headers={"Content-Type": "text/html; charset=utf-8"})
    for host in first:
        mockserver.set_page(host, "/", Reply(hang=True), page)
    # The held pages must not time out before they are released.
    settings = {**OURS, "ROBOTRULES_STORE": redis_server.url, "DOWNLOAD_TIMEOUT": 30.0}
    crawl = Running(
        run_spider(
            RecordingSpider, settings, start_urls=[mockserver.url(h) for h in first], follow=True
        )
    )
    await until(lambda: crawl.done or all(mockserver.holding(h, "/") for h in first))
    assert not any(mockserver.requests_for(h) for h in later)  # none known before the kill
    redis_server.stop()
    assert [mockserver.release(h, path="/") for h in first] == [1] * 5
    result = await crawl
    # Robots.txt still decides: the later sites' private pages are dropped.
    assert paths(result, result.crawled) == [""] * 5 + ["a"] * 5
    assert paths(result, result.ignored) == ["private/b"] * 5
    for host in later:
        assert len(robots_log(mockserver, host)) == 1
    warnings = result.messages("in-process memory store")
    assert len(warnings) == 1
    assert stat(result, "store/errors") >= 1


# A fleet on scrapy-redis: one shared request queue and duplicate filter,
# and the robots.txt store on the same Redis server.

QUEUED_SITES = 6
SLOW = "slow.test"
"""The scrapy-redis fleet's ``Crawl-delay: 1`` site."""


def _scrapy_redis(redis_url: str) -> dict[str, Any]:
    """What each crawler of a scrapy-redis fleet sets (docs/guides/stores.rst shows the same)."""
    return {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        # scrapy-redis's own filter, counting what it filters (see fleet_worker.py).
        "DUPEFILTER_CLASS": "tests.helpers.fleet_worker.CountingDupeFilter",
        # Never flush the shared queue when one crawler closes: the others use it.
        "SCHEDULER_PERSIST": True,
        "REDIS_URL": redis_url,
        "ROBOTRULES_STORE": redis_url,
        # Idle crawlers wait this long for more work (checked every 5 s), then close.
        "MAX_IDLE_TIME_BEFORE_CLOSE": 2,
        # One request at a time (and one start URL at a time) per crawler:
        # none can take all the work, so the crawlers share sites.
        "CONCURRENT_REQUESTS": 1,
    }


def _push_start_urls(redis_url: str, urls: list[str]) -> None:
    """Give the fleet its start URLs as scrapy-redis spiders read them."""
    client = redis.Redis.from_url(redis_url)
    client.rpush("fleet:start_urls", *(json.dumps({"url": url}) for url in urls))
    client.close()


class QueuedSites(NamedTuple):
    start_urls: list[str]
    allowed: set[str]
    forbidden: set[str]
    offers: Counter[str]
    """Each URL, as many times as the fleet offers it: as a start URL, or as a link."""


def _queued_sites(mockserver: MockServer) -> QueuedSites:
    """Six sites of three kinds, each page linking to its site's pages and the next site; SLOW.

    The start URLs are SLOW's pages first (so that several crawlers take
    one), then every site's home page.
    """
    hosts = [f"q{n}.test" for n in range(QUEUED_SITES)]
    allowed: set[str] = set()
    forbidden: set[str] = set()
    links: dict[str, list[str]] = {}
    for n, host in enumerate(hosts):
        pages = ("/", "/a", "/b", "/private/c")
        ok, refused = _one_of_three_kinds(
            mockserver, n, host, pages, private="/private/c", fleetbot="/b"
        )
        allowed |= ok
        forbidden |= refused
        own = [mockserver.url(host, p) for p in ("/a", "/b", "/private/c")]
        links[host] = [*own, mockserver.url(hosts[(n + 1) % QUEUED_SITES])]
    mockserver.set_robots(SLOW, Reply(body=b"User-agent: *\nCrawl-delay: 1\n" + PRIVATE[14:]))
    links[SLOW] = [mockserver.url(SLOW, p) for p in ("/a", "/b", "/c", "/d", "/private/e")]
    slow = [mockserver.url(SLOW, p) for p in ("/", "/a", "/b", "/c", "/d")]
    allowed.update(slow)
    forbidden.add(mockserver.url(SLOW, "/private/e"))
    for host, urls in links.items():
        mockserver.set_pages(host, urls)
    start_urls = slow + [mockserver.url(host) for host in hosts]
    offers = Counter(start_urls)
    for page in allowed:
        offers.update(links[urlsplit(page).hostname or ""])
    return QueuedSites(start_urls, allowed, forbidden, offers)


@async_test
async def test_a_scrapy_redis_fleet_ends_every_request_once_and_keeps_crawl_delay_together(
    mockserver: MockServer, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Three crawlers on one scrapy-redis queue and duplicate filter, robots.txt on the same Redis.

    The crawlers take the start URLs from Redis a few at a time; the shared
    filter lets each URL into the shared queue once, and any crawler may
    download it.
    """
    workers = 3
    start_urls, allowed, forbidden, offers = _queued_sites(mockserver)
    _push_start_urls(redis_server.url, start_urls)
    settings = {**FLEET_SETTINGS, **_scrapy_redis(redis_server.url)}
    fleet = await _run_workers(
        mockserver, tmp_path, workers, [], settings, options={"shared_queue": True}
    )
    keys = {key for result in fleet for key in result["stats"]}
    total = {key: sum(r["stats"].get(key, 0) for r in fleet) for key in keys}

    # Every request ended once across the fleet: each allowed URL downloaded
    # once, by one crawler; every offer of a forbidden URL dropped, counted
    # once; every other offer of an allowed URL filtered as a duplicate.
    crawled = [url for result in fleet for url in result["crawled"]]
    assert sorted(crawled) == sorted(allowed)
    pages = [mockserver.url(r.host, r.path) for r in mockserver.requests if r.path != "/robots.txt"]
    assert sorted(pages) == sorted(allowed)  # the server saw each once, none forbidden
    dropped = Counter(url for result in fleet for url in result["dropped"])
    filtered = Counter(url for result in fleet for url in result["filtered"])
    assert dropped - filtered == Counter({url: offers[url] for url in forbidden})
    assert filtered == Counter({url: offers[url] - 1 for url in allowed if offers[url] > 1})
    assert total["dupefilter/filtered"] == filtered.total()
    assert total["robotrules/offered"] == offers.total()
    assert total["robotrules/forbidden"] == sum(offers[url] for url in forbidden)
    assert total["robotrules/allowed"] == sum(offers[url] for url in allowed)
    # The stats identity (docs/reference/stats.rst), summed over the fleet.
    ends = ["allowed", "forbidden", "unreachable", "unchecked", "lost_at_close", "saved_at_close"]
    assert total["robotrules/offered"] == sum(total.get(f"robotrules/{end}", 0) for end in ends)
    assert total["robotrules/allowed"] == (
        total["scheduler/enqueued/redis"] + total["dupefilter/filtered"]
    )
    assert total["scheduler/enqueued/redis"] == total["scheduler/dequeued/redis"] == len(allowed)
    assert redis.Redis.from_url(redis_server.url).zcard("fleet:requests") == 0
    assert total.get("log_count/ERROR", 0) == 0

    # Each robots.txt fetched once in all.
    hosts = [f"q{n}.test" for n in range(QUEUED_SITES)] + [SLOW]
    assert {h: len(robots_log(mockserver, h)) for h in hosts} == dict.fromkeys(hosts, 1)
    assert total["robotrules/request_count"] == len(hosts)

    # The fleet together kept SLOW's Crawl-delay: 1.
    visits = mockserver.requests_for(SLOW)
    assert len(visits) == 1 + 5
    _assert_paced(mockserver, fleet, SLOW, delay=1.0, pages=5)


@async_test
async def test_a_scrapy_redis_crawler_stopped_with_requests_parked_hands_them_to_the_fleet(
    mockserver: MockServer, redis_server: RedisServer, tmp_path: Path
) -> None:
    """A crawler stopped while its requests wait for robots.txt puts them in the shared queue.

    There another crawler of the fleet takes them, once robots.txt answers.
    """
    mockserver.set_robots("parked.test", Reply(hang=True))
    urls = [mockserver.url("parked.test", path) for path in ("/a", "/b", "/private/c")]
    _push_start_urls(redis_server.url, urls)
    settings = {
        **FLEET_SETTINGS,
        **_scrapy_redis(redis_server.url),
        "CONCURRENT_REQUESTS": 16,  # the three start URLs at once
        "DOWNLOAD_TIMEOUT": 2,  # the hung fetch ends the graceful stop
        "ROBOTRULES_RETRY_DELAY": 0.2,
    }
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    [stopped] = await _run_workers(
        mockserver, first, 1, [], settings, options={"shared_queue": True, "stop_when_parked": 3}
    )
    assert stopped["finish_reason"] == "shutdown"
    assert stopped["stats"]["robotrules/parked"] == 3
    assert stopped["crawled"] == []
    assert stopped["stats"].get("robotrules/lost_at_close", 0) == 0
    # Handed to the shared queue as the scheduler closed, and kept there.
    assert stopped["stats"]["robotrules/saved_at_close"] == 3
    assert stopped["stats"]["scheduler/enqueued/redis"] == 3
    assert redis.Redis.from_url(redis_server.url).zcard("fleet:requests") == 3

    mockserver.release("parked.test", Reply(body=PRIVATE))
    [taker] = await _run_workers(
        mockserver, second, 1, [], settings, options={"shared_queue": True}
    )
    assert sorted(taker["crawled"]) == urls[:2]
    assert taker["stats"]["scheduler/dequeued/redis"] == 3
    # Offered anew there, as after a JOBDIR resume, and decided.
    assert taker["stats"]["robotrules/offered"] == 3
    assert taker["stats"]["robotrules/allowed"] == 2
    assert taker["stats"]["robotrules/forbidden"] == 1
    pages = [r.path for r in mockserver.requests_for("parked.test") if r.path != "/robots.txt"]
    assert sorted(pages) == ["/a", "/b"]
    assert redis.Redis.from_url(redis_server.url).zcard("fleet:requests") == 0


# Fleets on a Redis Cluster and on a Sentinel group, a master failing over mid-crawl.

FIRST = 10
LATER = 30
"""Sites crawled before the failover (and DELAYED), and sites only their pages link to."""


class FailoverSites(NamedTuple):
    start_urls: list[str]
    allowed: set[str]
    forbidden: set[str]
    hosts: list[str]


def _failover_sites(mockserver: MockServer, crawlers: int) -> FailoverSites:
    """41 origins: FIRST sites and DELAYED, whose home pages hang; LATER sites they link to.

    Each home page hangs (once per crawler) until the test releases it: the
    fleet has then fetched the first robots.txt files and booked DELAYED's
    first turns, and makes no store call until the pages are answered.
    """
    first = [f"first{n}.test" for n in range(FIRST)]
    later = [f"later{n}.test" for n in range(LATER)]
    allowed: set[str] = set()
    forbidden: set[str] = set()
    for n, host in enumerate(later):
        ok, refused = _one_of_three_kinds(
            mockserver, n, host, ("/a", "/private/b"), private="/private/b", fleetbot="/a"
        )
        allowed |= ok
        forbidden |= refused
    hold = [Reply(hang=True)] * crawlers
    for n, host in enumerate(first):
        mockserver.set_robots(host, Reply(body=PRIVATE))
        links = [
            mockserver.url(h, p) for h in later[3 * n : 3 * n + 3] for p in ("/a", "/private/b")
        ]
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
        page = Reply(body=anchors.encode(), headers={"Content-Type": "text/html; charset=utf-8"})
        mockserver.set_page(host, "/", *hold, page)
        allowed.add(mockserver.url(host))
    mockserver.set_robots(DELAYED, Reply(body=b"User-agent: *\nCrawl-delay: 1\n" + PRIVATE[14:]))
    links = [mockserver.url(DELAYED, "/a"), mockserver.url(DELAYED, "/private/b")]
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    page = Reply(body=anchors.encode(), headers={"Content-Type": "text/html; charset=utf-8"})
    mockserver.set_page(DELAYED, "/", *hold, page)
    allowed.update([mockserver.url(DELAYED), mockserver.url(DELAYED, "/a")])
    forbidden.add(mockserver.url(DELAYED, "/private/b"))
    start_urls = [mockserver.url(host) for host in [*first, DELAYED]]
    return FailoverSites(start_urls, allowed, forbidden, [*first, *later, DELAYED])


async def _fleet_through_a_failover(
    mockserver: MockServer, tmp_path: Path, url: str, fail_over: Callable[[], object]
) -> list[dict[str, Any]]:
    """Three crawlers on ``url``; ``fail_over()`` once every one waits on every home page.

    The home pages are answered once it returned (the new master up): every
    later store call of the fleet goes to the new master. Asserts that no
    request was lost, doubled or let through against robots.txt, that the
    failover lost nothing (each robots.txt fetched once), that DELAYED's
    Crawl-delay held across it, and that each crawler said so once.
    """
    crawlers = 3
    start_urls, allowed, forbidden, hosts = _failover_sites(mockserver, crawlers)
    homes = [urlsplit(url).hostname or "" for url in start_urls]
    failed_over: list[bool] = []

    def at_the_failover() -> None:
        if failed_over or not all(mockserver.holding(h, "/") == crawlers for h in homes):
            return
        fail_over()
        failed_over.append(True)
        for host in homes:
            assert mockserver.release(host, path="/") == crawlers

    settings = {**FLEET_SETTINGS, "ROBOTRULES_STORE": url, "DOWNLOAD_TIMEOUT": 60.0}
    fleet = await _run_workers(
        mockserver, tmp_path, crawlers, start_urls, settings, on_poll=at_the_failover
    )
    assert failed_over
    # Each crawler crawled every allowed page once, and was refused every forbidden one.
    for result in fleet:
        assert sorted(result["crawled"]) == sorted(allowed)
        assert set(result["forbidden"]) == forbidden
        assert result["failed"] == {}
    pages = Counter(mockserver.url(r.host, r.path) for r in mockserver.requests)
    assert not set(pages) & forbidden  # none reached a site
    # Nothing the store held was lost: each robots.txt fetched once for the fleet.
    assert {h: len(robots_log(mockserver, h)) for h in hosts} == dict.fromkeys(hosts, 1)
    # DELAYED's turns, before the failover and after, a second apart across the fleet.
    _assert_paced(mockserver, fleet, DELAYED, delay=1.0, pages=2 * crawlers)
    for n, result in enumerate(fleet):
        log = (tmp_path / f"worker{n}.log").read_text()
        assert log.count("failed over") == 1, log[-3000:]  # one WARNING per crawler
        assert "Traceback" not in log
        assert "in-process memory store" not in log  # never fell back
        assert result["stats"].get("robotrules/store/errors", 0) == 0
    return fleet


@async_test
async def test_a_fleet_on_a_redis_cluster_survives_a_master_killed_mid_crawl(
    mockserver: MockServer, redis_cluster: ClusterServers, tmp_path: Path
) -> None:
    """The master holding DELAYED's keys is killed; its replica takes over its slots."""
    origin = mockserver.url(DELAYED).rstrip("/")
    master = redis_cluster.master_of(f"robotrules:pace:{{{origin}}}")

    def fail_over() -> None:
        # Every write the fleet made so far is on the replica: none lost.
        assert replicated(master)
        redis_cluster.fail_over(master)

    await _fleet_through_a_failover(mockserver, tmp_path, redis_cluster.url, fail_over)


@async_test
async def test_a_fleet_on_a_sentinel_group_survives_its_master_killed_mid_crawl(
    mockserver: MockServer, redis_sentinel: SentinelGroup, tmp_path: Path
) -> None:
    """The master is killed; the sentinels promote the replica, and the fleet finds it."""

    def fail_over() -> None:
        assert replicated(redis_sentinel.master)
        redis_sentinel.fail_over()

    await _fleet_through_a_failover(mockserver, tmp_path, redis_sentinel.url, fail_over)
