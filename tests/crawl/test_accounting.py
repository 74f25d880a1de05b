"""Every request a crawl sees is accounted for, and waits without a download place.

- Redirected and retried requests: a redirect to another URL is decided
  again, for its own origin and path, and waits (parked) like any new
  request; a retry of a URL carries its decision.
- Beyond ``ROBOTRULES_MAX_WAITING_PER_ORIGIN`` waiting requests, the
  overflow waits on disk, not in the downloader.
- The stats identity: ``offered`` = ``allowed`` + ``forbidden`` +
  ``unreachable`` + ``unchecked`` + ``lost_at_close`` + ``saved_at_close``,
  over every kind of request (errbacks, duplicates, redirects, retries,
  ``dont_obey_robotstxt``, parked, unreachable).

The order of events is made by the server: a robots.txt is held
(``Reply(hang=True)``) until the crawl has done what the test needs, then
released, so no assertion depends on how fast the machine is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from functools import partial
from typing import Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest

from scrapy_robotrules.crawl.manager import RobotsManager
from tests.helpers.accounting import SavableSpider, identity_holds
from tests.helpers.crawling import RecordingSpider, async_test, release_when, run_spider
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import OURS, PRIVATE, stat

CRAWL_TESTS = True

ONE_PLACE = {**OURS, "CONCURRENT_REQUESTS": 1, "DOWNLOAD_TIMEOUT": 20.0}
"""One download place in all: a request waiting in the downloader stops every site."""


@async_test
async def test_a_redirect_to_an_unreachable_origin_is_held_without_a_place_then_dropped(
    mockserver: MockServer,
) -> None:
    # a.test/r redirects to dead.test, whose robots.txt hangs until every
    # page of ok.test was fetched through the one download place, then fails.
    mockserver.set_page("a.test", "/r", Reply(302, redirect_to=mockserver.url("dead.test", "/p")))
    mockserver.set_robots("dead.test", Reply(hang=True), Reply(500))
    ok = [mockserver.url("ok.test", f"/{n}") for n in range(5)]
    released = release_when(mockserver, "ok.test", 5, partial(mockserver.release, "dead.test"))
    settings = {
        **ONE_PLACE,
        "ROBOTRULES_RETRY_DELAY": 0.2,
        "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.5,
    }
    result = await run_spider(
        RecordingSpider, settings, start_urls=[mockserver.url("a.test", "/r"), *ok]
    )
    assert released[0], "ok.test's pages waited behind the redirected request"
    assert sorted(result.crawled) == sorted(ok)
    # Decided for dead.test, held, dropped as unreachable: never downloaded.
    assert mockserver.requests_for("dead.test", "/p") == []
    assert stat(result, "unreachable") == 1
    [(url, exc)] = result.failures
    assert url == mockserver.url("a.test", "/r")
    assert "robots.txt unreachable" in str(exc)
    assert identity_holds(result)


@async_test
async def test_a_redirect_is_decided_for_its_own_origin_and_path(mockserver: MockServer) -> None:
    mockserver.set_robots("a.test", Reply(body=PRIVATE))
    mockserver.set_robots("b.test", Reply(body=b"User-agent: *\nDisallow: /no\n"))
    redirects = {
        "/to-private": mockserver.url("a.test", "/private/x"),
        "/to-b-ok": mockserver.url("b.test", "/yes"),
        "/to-b-no": mockserver.url("b.test", "/no"),
    }
    for path, target in redirects.items():
        mockserver.set_page("a.test", path, Reply(302, redirect_to=target))
    starts = [mockserver.url("a.test", path) for path in redirects]
    result = await run_spider(RecordingSpider, OURS, start_urls=starts)
    assert result.crawled == [mockserver.url("b.test", "/yes")]
    assert sorted(url for url, _ in result.failures) == sorted(
        mockserver.url("a.test", p) for p in ("/to-private", "/to-b-no")
    )
    assert mockserver.requests_for("b.test", "/no") == []
    assert mockserver.requests_for("a.test", "/private/x") == []
    # Three offered at the start, three more when redirected.
    assert stat(result, "offered") == 6
    assert (stat(result, "allowed"), stat(result, "forbidden")) == (4, 2)
    assert identity_holds(result)


@async_test
async def test_waiting_requests_past_the_per_origin_cap_take_no_download_place(
    mockserver: MockServer,
) -> None:
    # slow.test's robots.txt is answered only once fast.test's ten pages
    # were fetched through the one download place.
    mockserver.set_robots("slow.test", Reply(hang=True), Reply(body=PRIVATE))
    slow = [mockserver.url("slow.test", f"/{n}") for n in range(40)]
    fast = [mockserver.url("fast.test", f"/{n}") for n in range(10)]
    released = release_when(mockserver, "fast.test", 10, partial(mockserver.release, "slow.test"))
    settings = {**ONE_PLACE, "ROBOTRULES_MAX_WAITING_PER_ORIGIN": 5}
    result = await run_spider(SavableSpider, settings, start_urls=[*slow, *fast])
    assert released[0], "fast.test's pages waited behind slow.test's overflow"
    assert sorted(result.crawled) == sorted(slow + fast)
    # Five waited in memory, the other 35 on disk, in a directory gone with the crawl.
    assert stat(result, "parked/disk/max") == 35
    manager = RobotsManager.for_crawler(result.crawler)
    assert manager.parking.overflow_dir._path is None
    assert stat(result, "parked/memory") == 0
    assert stat(result, "offered") == stat(result, "allowed") == 50
    assert identity_holds(result)


class MixedSpider(RecordingSpider):
    """Yields ``plan``: (URL, errback?, meta) for each request, in order."""

    name = "mixed"

    def __init__(self, plan: Sequence[tuple[str, bool, dict[str, Any]]] = (), **kw: Any) -> None:
        super().__init__(**kw)
        self.plan = list(plan)

    async def start(self) -> AsyncIterator[Request]:
        for url, errback, meta in self.plan:
            yield Request(
                url,
                callback=self.parse,
                errback=partial(self.on_failure, url) if errback else None,
                meta=dict(meta),
            )


@async_test
async def test_the_stats_identity_holds_for_every_kind_of_request(mockserver: MockServer) -> None:
    url = mockserver.url
    mockserver.set_robots("ok.test", Reply(body=PRIVATE))
    mockserver.set_robots("slow.test", Reply(hang=True), Reply(body=PRIVATE))
    mockserver.set_robots("dead.test", Reply(500))
    mockserver.set_robots("none.test", Reply(body=b"User-agent: *\nDisallow: /\n"))
    # A page that fails once (retried by Scrapy), redirects of every kind.
    mockserver.set_page("ok.test", "/flaky", Reply(503), Reply(200, body=b"fine"))
    mockserver.set_page("ok.test", "/r-ok", Reply(301, redirect_to=url("ok.test", "/moved")))
    mockserver.set_page("ok.test", "/r-private", Reply(302, redirect_to=url("ok.test", "/private")))
    mockserver.set_page("ok.test", "/r-slow", Reply(302, redirect_to=url("slow.test", "/x")))
    mockserver.set_page("ok.test", "/r-dead", Reply(302, redirect_to=url("dead.test", "/x")))
    plain: dict[str, Any] = {}
    plan: list[tuple[str, bool, dict[str, Any]]] = [
        (url("ok.test", "/a"), False, plain),
        (url("ok.test", "/a"), False, plain),  # a duplicate
        (url("ok.test", "/private/1"), False, plain),
        (url("ok.test", "/private/1"), False, plain),  # a forbidden duplicate
        (url("ok.test", "/private/2"), True, plain),  # forbidden, with an errback
        (url("none.test", "/b"), True, plain),
        (url("none.test", "/c"), False, {"dont_obey_robotstxt": True}),
        (url("ok.test", "/flaky"), False, plain),
        (url("ok.test", "/r-ok"), False, plain),
        (url("ok.test", "/r-private"), True, plain),
        (url("ok.test", "/r-slow"), False, plain),
        (url("ok.test", "/r-dead"), True, plain),
        (url("slow.test", "/y"), False, plain),
        (url("dead.test", "/z"), False, plain),
        ("data:,inline", False, plain),
    ]
    released = release_when(mockserver, "ok.test", 7, partial(mockserver.release, "slow.test"))
    settings = {
        **OURS,
        "RETRY_ENABLED": True,
        "RETRY_TIMES": 2,
        "DOWNLOAD_TIMEOUT": 20.0,
        "ROBOTRULES_RETRY_DELAY": 0.2,
        "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.6,
    }
    result = await run_spider(MixedSpider, settings, plan=plan)
    assert released[0]
    assert sorted(result.crawled) == sorted(
        [
            url("ok.test", "/a"),
            url("none.test", "/c"),
            url("ok.test", "/flaky"),
            url("ok.test", "/moved"),
            url("slow.test", "/x"),
            url("slow.test", "/y"),
            "data:,inline",
        ]
    )
    # Every request the spider made, and every redirect, counted once;
    # the retry of /flaky carried its decision and is not counted again.
    assert stat(result, "offered") == len(plan) + 4
    assert stat(result, "unchecked") == 2
    assert result.stats.get("retry/reason_count/503 Service Unavailable") == 1
    # Forbidden: both /private/1, /private/2, none.test/b, the redirect to
    # /private; unreachable: dead.test/z and the redirect to dead.test.
    assert stat(result, "forbidden") == 5
    assert stat(result, "unreachable") == 2
    # Allowed: /a twice (the duplicate then filtered), /flaky, the four
    # redirecting pages, /moved, slow.test's two.
    assert stat(result, "allowed") == 10
    assert result.stats.get("dupefilter/filtered") == 1
    # Each errback heard of its request's end exactly once.
    assert sorted(u for u, exc in result.failures if isinstance(exc, IgnoreRequest)) == sorted(
        [
            url("ok.test", "/private/2"),
            url("none.test", "/b"),
            url("ok.test", "/r-private"),
            url("ok.test", "/r-dead"),
        ]
    )
    assert identity_holds(result)
