"""Each request is decided once, and again only when its origin or its rules changed.

The extension decides a request when it is scheduled; the downloader
middleware reuses that decision while the rules it was made with still hold
(a retry of the same URL included). A redirect is decided for its own URL;
rules that changed in between (here: evicted, then fetched again with a new
robots.txt) decide it again. The origin of a request's URL is computed once
for its decision, its parking, its Crawl-delay and its fleet turns.

The order of events is made by the server and the crawl's signals: a page is
held until the crawl reached the state the test wants, then released.
"""

from __future__ import annotations

import gc
import sys
import weakref
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.squeues import MarshalFifoDiskQueue, PickleFifoDiskQueue
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.test import get_crawler

from scrapy_robotrules import Addon
from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.crawl.requestmeta import carried_in
from scrapy_robotrules.crawl.signals import robotrules_fetched
from scrapy_robotrules.engine.robots.urls import origin_of
from scrapy_robotrules.engine.stores import Entry
from tests.helpers.accounting import identity_holds
from tests.helpers.crawling import (
    ONE_POOL,
    SCRAPY_VERSION,
    RecordingSpider,
    async_test,
    call_later,
    not_reactorless,
    run_spider,
    when,
)
from tests.helpers.mockserver import MockServer, Reply, RequestRecord
from tests.helpers.variants import OURS, ManualClock, robots_log, stat

CRAWL_TESTS = True

ALLOW_ALL = b"User-agent: *\nDisallow: /nothing\n"


def _count_explained(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times the rules were asked about each URL."""
    asked: Counter[str] = Counter()
    explain = Entry.explain

    def counting(self: Entry, url: str, *args: Any) -> Any:
        asked[url] += 1
        return explain(self, url, *args)

    monkeypatch.setattr(Entry, "explain", counting)
    return asked


@async_test
async def test_a_request_is_decided_once_a_retry_carries_it_and_a_redirect_is_decided_again(
    mockserver: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _count_explained(monkeypatch)
    mockserver.set_robots("a.test", Reply(body=ALLOW_ALL))
    mockserver.set_page("a.test", "/flaky", Reply(503), Reply(200, body=b"ok"))
    mockserver.set_page("a.test", "/moved", Reply(302, redirect_to=mockserver.url("a.test", "/2")))
    urls = [mockserver.url("a.test", path) for path in ("/1", "/flaky", "/moved")]
    settings = {**OURS, "RETRY_ENABLED": True, "RETRY_TIMES": 1, "RETRY_HTTP_CODES": [503]}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert len(mockserver.requests_for("a.test", "/flaky")) == 2
    assert sorted(result.crawled) == sorted([urls[0], urls[1], mockserver.url("a.test", "/2")])
    # Once each: at scheduling; the middleware, the retry and the redirect's
    # source reuse it; the redirect's target is a new URL, decided once.
    assert asked == Counter(dict.fromkeys([*urls, mockserver.url("a.test", "/2")], 1))
    assert stat(result, "allowed") == 4
    assert identity_holds(result)


class _LaterSpider(RecordingSpider):
    """Schedules ``later`` once the first page reached the server, then another origin."""

    def __init__(self, later: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.later = later

    def schedule_later(self) -> None:
        for url in self.later:
            self.crawler.engine.crawl(self.request(url))


@not_reactorless(ONE_POOL)
@async_test
async def test_rules_changed_between_scheduling_and_download_decide_again(
    mockserver: MockServer,
) -> None:
    # a.test/later is allowed when scheduled (a.test's first robots.txt),
    # waits behind the held /hold in the one download place, meanwhile
    # b.test's rules evict a.test's (a cache of one), and the robots.txt
    # fetched again forbids it: the middleware decides it again.
    mockserver.set_robots(
        "a.test", Reply(body=ALLOW_ALL), Reply(body=b"User-agent: *\nDisallow: /later\n")
    )
    mockserver.set_robots("b.test", Reply(body=ALLOW_ALL))
    mockserver.set_page("a.test", "/hold", Reply(hang=True))
    url = mockserver.url
    spiders: list[_LaterSpider] = []

    def hold_reached(record: RequestRecord) -> None:
        if record.host == "a.test" and record.path == "/hold":
            spiders[0].schedule_later()

    def fetched(origin: str, **kwargs: Any) -> None:
        if origin.startswith("http://b.test"):
            mockserver.release("a.test", Reply(200, body=b"held"), path="/hold")

    mockserver.listeners.append(hold_reached)

    class Spider(_LaterSpider):
        @classmethod
        def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Any:
            spider = super().from_crawler(crawler, *args, **kwargs)
            assert isinstance(spider, _LaterSpider)
            spiders.append(spider)
            crawler.signals.connect(fetched, signal=robotrules_fetched)
            return spider

    settings = {**OURS, "CONCURRENT_REQUESTS": 1, "ROBOTRULES_CACHE_SIZE": 1}
    result = await run_spider(
        Spider,
        settings,
        start_urls=[url("a.test", "/hold")],
        later=[url("a.test", "/later"), url("b.test", "/x")],
    )
    assert sorted(result.crawled) == sorted([url("a.test", "/hold"), url("b.test", "/x")])
    assert mockserver.requests_for("a.test", "/later") == []
    [(failed, exc)] = result.failures
    assert failed == url("a.test", "/later")
    assert "Disallow: /later (line 2)" in str(exc)
    assert len(mockserver.requests_for("a.test", "/robots.txt")) == 2
    # Allowed when scheduled, then moved to forbidden: counted once, as forbidden.
    assert stat(result, "allowed") == 2
    assert stat(result, "forbidden") == 1
    assert identity_holds(result)


@async_test
async def test_the_origin_of_a_request_is_computed_once(
    mockserver: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed: Counter[str] = Counter()

    def counting(url: str) -> str:
        computed[url] += 1
        return origin_of(url)

    # Wherever the package imported it from the engine.
    for name, module in list(sys.modules.items()):
        if name.startswith("scrapy_robotrules") and getattr(module, "origin_of", None) is origin_of:
            monkeypatch.setattr(module, "origin_of", counting)
    # A Crawl-delay: its slot floor and pace ask for the origin at every page.
    mockserver.set_robots("a.test", Reply(body=b"User-agent: *\nCrawl-delay: 0.01\n"))
    urls = [mockserver.url("a.test", f"/{n}") for n in range(3)]
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert sorted(result.crawled) == sorted(urls)
    assert stat(result, "crawl_delay/applied") >= 1
    assert {url: computed[url] for url in urls} == dict.fromkeys(urls, 1)


@async_test
async def test_a_url_offered_again_under_the_same_rules_is_not_decided_again(
    mockserver: MockServer,
) -> None:
    # Every page links to the same four pages, as a site's menu does: each is
    # offered once per page crawled, and the duplicate filter drops all but
    # the first only after the offer was decided (the gate comes first).
    mockserver.set_robots("a.test", Reply(body=b"User-agent: *\nDisallow: /private\n"))
    links = ["/1", "/2", "/3", "/private"]
    mockserver.set_pages("a.test", links=links)
    start = mockserver.url("a.test", "/")
    result = await run_spider(RecordingSpider, OURS, start_urls=[start], follow=True)
    pages = [start] + [mockserver.url("a.test", path) for path in links[:3]]
    assert sorted(result.crawled) == sorted(pages)
    offers = 1 + 4 * len(pages)  # the start page, then each page's four links
    assert stat(result, "offered") == offers
    assert stat(result, "allowed") == offers - len(pages)  # /private: forbidden at each offer
    assert stat(result, "forbidden") == len(pages)
    # An allowed URL offered again takes its latest answer; a forbidden one is decided again.
    answers = result.crawler._robotrules_manager.answers.by_url  # type: ignore[attr-defined]
    for path in links[:3]:
        assert answers[mockserver.url("a.test", path)].carried is not None
    assert answers[mockserver.url("a.test", "/private")].carried is None


class _OwnUserAgent:
    """A downloader middleware before this package's: gives ``/other`` an agent of its own."""

    def process_request(self, request: Any, spider: Any = None) -> None:
        if request.url.endswith("/other"):
            request.headers[b"User-Agent"] = b"OtherBot/1.0"


@async_test
async def test_a_request_given_another_agent_after_scheduling_is_decided_again(
    mockserver: MockServer,
) -> None:
    # Both allowed when scheduled, for the crawler's agent; then /other gets an
    # agent of its own, which robots.txt forbids: the middleware decides it again.
    robots = b"User-agent: OtherBot\nDisallow: /\n\nUser-agent: *\nDisallow: /nothing\n"
    mockserver.set_robots("a.test", Reply(body=robots))
    mine, other = (mockserver.url("a.test", path) for path in ("/mine", "/other"))
    settings = {**OURS, "DOWNLOADER_MIDDLEWARES": {_OwnUserAgent: 50}}
    result = await run_spider(RecordingSpider, settings, start_urls=[mine, other])
    assert result.crawled == [mine]
    assert mockserver.requests_for("a.test", "/other") == []
    [(failed, exc)] = result.failures
    assert failed == other
    assert "Disallow: / (line 2)" in str(exc)
    # Allowed when scheduled, then moved to forbidden: counted once, as forbidden.
    assert stat(result, "allowed") == 1
    assert stat(result, "forbidden") == 1
    assert identity_holds(result)


def test_an_allowed_answer_kept_for_duplicates_keeps_no_decision_alive() -> None:
    """A crawl's every URL has an answer: its decision (an object, its dict, its groups) is not
    kept for it; a later offer the gate cannot take at once is decided again, the same."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ADDONS": {Addon: 0}})
    manager = RobotsManager.for_crawler(crawler)
    manager.db.parse("http://site.test/robots.txt", b"User-agent: *\nDisallow: /private\n")
    decision = manager.decider.decide_now(Request("http://site.test/page"))
    assert decision is not None
    assert decision.allowed
    reason = decision.reason
    kept = weakref.ref(decision)
    del decision
    gc.collect()
    assert kept() is None
    assert manager.answers.by_url["http://site.test/page"].carried is not None  # duplicates take it
    again = manager.decider.decide_now(Request("http://site.test/page"))
    assert again is not None
    assert again.allowed
    assert again.reason == reason


class _PastAgeSpider(_LaterSpider):
    """``later`` scheduled as ``/hold`` arrives, a manual clock for the crawl's time of day,
    and ``once_parked`` called once ``parked`` requests wait parked and ``also()`` holds (or
    the spider closed): ``also`` tells those requests from ``/hold`` parked at the start."""

    def __init__(
        self,
        clock: ManualClock,
        once_parked: Callable[[], object],
        parked: int = 1,
        also: Callable[[], bool] = lambda: True,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.clock = clock
        self.once_parked = once_parked
        self.parked = parked
        self.also = also
        self.done = False

    async def start(self) -> AsyncIterator[Request]:
        manager = RobotsManager.for_crawler(self.crawler)
        manager.db.clock = self.clock
        when(
            lambda: (len(manager.parking) == self.parked and self.also()) or self.done,
            self.once_parked,
        )
        async for request in super().start():
            yield request

    def closed(self, reason: str) -> None:
        self.done = True


@pytest.mark.parametrize("forbids", [True, False], ids=["now-forbidden", "still-allowed"])
@async_test
async def test_a_request_whose_rules_went_past_their_age_waits_for_the_next_file(
    mockserver: MockServer, forbids: bool
) -> None:
    # /later is allowed when scheduled, then waits behind the held /hold in
    # the one download place while its rules go past their age. At the
    # downloader it is decided again under the next robots.txt, fetched while
    # it waits parked: that file is held until it does, then forbids or allows it.
    second = b"User-agent: *\nDisallow: /later\n" if forbids else ALLOW_ALL
    mockserver.set_robots("a.test", Reply(body=ALLOW_ALL), Reply(hang=True))
    mockserver.set_page("a.test", "/hold", Reply(hang=True))
    url = mockserver.url
    clock = ManualClock()
    crawlers: list[Any] = []
    at_later: list[tuple[int, int]] = []  # robots.txt fetches made, and held, as /later arrived

    def listen(record: RequestRecord) -> None:
        if record.path == "/hold":
            crawlers[0].spider.schedule_later()
            clock.advance(86_400 + 1)  # ROBOTRULES_MAX_AGE's default, and a second
            call_later(0, mockserver.release, "a.test", Reply(200), path="/hold")
        elif record.path == "/later":
            at_later.append((len(robots_log(mockserver, "a.test")), mockserver.holding("a.test")))

    mockserver.listeners.append(listen)
    result = await run_spider(
        _PastAgeSpider,
        {**OURS, "CONCURRENT_REQUESTS": 1},
        start_urls=[url("a.test", "/hold")],
        later=[url("a.test", "/later")],
        clock=clock,
        once_parked=lambda: mockserver.release("a.test", Reply(body=second)),
        # /hold waits parked too, for the first file: /later is the one parked
        # once the next file's fetch is held.
        also=lambda: mockserver.holding("a.test") == 1,
        crawlers=crawlers,
    )
    assert len(robots_log(mockserver, "a.test")) == 2
    assert stat(result, "refreshed") == 1
    if forbids:
        assert result.crawled == [url("a.test", "/hold")]
        assert mockserver.requests_for("a.test", "/later") == []
        [(failed, exc)] = result.failures
        assert failed == url("a.test", "/later")
        assert "Disallow: /later (line 2)" in str(exc)
        # Allowed when scheduled, then forbidden under the next file: counted once.
        assert (stat(result, "allowed"), stat(result, "forbidden")) == (1, 1)
    else:
        assert result.crawled == [url("a.test", "/hold"), url("a.test", "/later")]
        assert at_later == [(2, 0)]  # downloaded once, after the next file came
        assert (stat(result, "allowed"), stat(result, "forbidden")) == (2, 0)
    assert stat(result, "offered") == 2
    assert identity_holds(result)


class _QueuedSpider(_PastAgeSpider):
    """:class:`_PastAgeSpider` whose ``later`` requests reach the downloader in their order."""

    def schedule_later(self) -> None:
        for place, url in enumerate(self.later):
            self.crawler.engine.crawl(self.request(url).replace(priority=-place))


@pytest.mark.skipif(
    SCRAPY_VERSION < (2, 14),
    reason="Scrapy 2.13 queues a request in its slot a loop turn after the middleware passes"
    " it, so requests passed in one turn are not yet in the queue the estimate reads",
)
@pytest.mark.parametrize("forbids", [True, False], ids=["now-forbidden", "still-allowed"])
@async_test
async def test_a_request_whose_rules_go_past_their_age_in_its_slots_queue_waits_for_the_next_file(
    mockserver: MockServer, forbids: bool
) -> None:
    # a.test asks a Crawl-delay of 0.5 s: its download slot lets a request go
    # every 0.5 to 0.61 s (its jitter kept within 10%). Its rules are fresh for
    # 1 s of a manual clock that never moves: what ages them is the wait in the
    # slot's queue alone. /hold takes the slot's one download place, held by
    # the server; the five pages scheduled then queue behind it, each expected
    # to leave one gap after the one before it: the first two within the
    # rules' age, the last three past it. Those three wait parked for the next
    # robots.txt, fetched in the same slot after the first two, which then
    # forbids or allows them.
    delay = b"User-agent: *\nCrawl-delay: 0.5\n"
    second = delay + (b"Disallow: /later\n" if forbids else b"Disallow: /nothing\n")
    mockserver.set_robots("a.test", Reply(body=delay + b"Disallow: /nothing\n"), Reply(body=second))
    mockserver.set_page("a.test", "/hold", Reply(hang=True))
    url = mockserver.url
    early = [url("a.test", "/early/1"), url("a.test", "/early/2")]
    later = [url("a.test", f"/later/{n}") for n in (3, 4, 5)]
    crawlers: list[Any] = []

    def listen(record: RequestRecord) -> None:
        if record.path == "/hold":
            # Scheduled once the slot owes no more of its delay: the queue alone sets the waits.
            call_later(1.0, crawlers[0].spider.schedule_later)

    mockserver.listeners.append(listen)
    result = await run_spider(
        _QueuedSpider,
        {
            **OURS,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
            "ROBOTRULES_MAX_AGE": 1,
            "DOWNLOAD_TIMEOUT": 30.0,  # /hold is held for more than a second
        },
        start_urls=[url("a.test", "/hold")],
        later=early + later,
        clock=ManualClock(),
        once_parked=lambda: mockserver.release("a.test", Reply(200), path="/hold"),
        parked=len(later),
        crawlers=crawlers,
    )
    arrived = [r.path for r in mockserver.requests_for("a.test")]
    assert arrived[:5] == ["/robots.txt", "/hold", "/early/1", "/early/2", "/robots.txt"]
    assert stat(result, "refreshed") == 1
    if forbids:
        assert arrived[5:] == []
        assert sorted(failed for failed, _ in result.failures) == later
        for _, exc in result.failures:
            assert "Disallow: /later (line 3)" in str(exc)
        # Allowed when scheduled, then forbidden under the next file: counted once.
        assert (stat(result, "allowed"), stat(result, "forbidden")) == (3, 3)
    else:
        assert sorted(arrived[5:]) == ["/later/3", "/later/4", "/later/5"]
        assert sorted(result.crawled) == sorted([url("a.test", "/hold"), *early, *later])
        assert (stat(result, "allowed"), stat(result, "forbidden")) == (6, 0)
    assert stat(result, "offered") == 6
    assert identity_holds(result)


class _SavableLaterSpider(_LaterSpider):
    """:class:`_LaterSpider` whose requests can be saved in ``JOBDIR`` (a spider method)."""

    def request(self, url: str) -> Request:
        return Request(url, callback=self.parse)


@async_test
async def test_a_request_resumed_from_jobdir_is_decided_under_the_new_crawls_file(
    mockserver: MockServer, tmp_path: Any
) -> None:
    # /later is allowed in the first crawl and saved, still scheduled, as it
    # stops. Its meta carries that decision into the second crawl, whose
    # rules are not the ones it was made under: /later waits, parked, for
    # a.test's robots.txt, which now forbids it.
    mockserver.set_robots("a.test", Reply(body=ALLOW_ALL))
    mockserver.set_page("a.test", "/hold", Reply(hang=True))
    url = mockserver.url
    crawlers: list[Any] = []

    def hold_reached(record: RequestRecord) -> None:
        if record.path == "/hold" and len(mockserver.requests_for("a.test", "/hold")) == 1:
            crawlers[0].spider.schedule_later()
            stop_async = getattr(crawlers[0], "stop_async", None)  # Scrapy 2.14+
            if stop_async is not None:
                deferred_from_coro(stop_async())
            else:
                crawlers[0].stop()

    mockserver.listeners.append(hold_reached)
    settings = {**OURS, "CONCURRENT_REQUESTS": 1, "JOBDIR": str(tmp_path / "job")}
    first = await run_spider(
        _SavableLaterSpider,
        settings,
        start_urls=[url("a.test", "/hold")],
        later=[url("a.test", "/later")],
        crawlers=crawlers,
    )
    assert first.stats.get("scheduler/enqueued/disk", 0) == 2
    assert mockserver.requests_for("a.test", "/later") == []
    assert (stat(first, "offered"), stat(first, "allowed")) == (2, 2)

    mockserver.set_robots("a.test", Reply(body=b"User-agent: *\nDisallow: /later\n"))
    mockserver.set_page("a.test", "/hold", Reply(200))
    second = await run_spider(_SavableLaterSpider, settings, later=[])
    assert mockserver.requests_for("a.test", "/later") == []
    assert stat(second, "forbidden") == 1
    assert stat(second, "parked") == 1
    assert identity_holds(second)


@pytest.mark.parametrize(
    "queue_class", [PickleFifoDiskQueue, MarshalFifoDiskQueue], ids=["pickle", "marshal"]
)
def test_a_decided_request_is_saved_by_either_disk_queue_and_its_decision_holds_after(
    queue_class: Any, tmp_path: Path
) -> None:
    """A ``JOBDIR`` crawl may save its requests with either of Scrapy's disk queues
    (``SCHEDULER_DISK_QUEUE``): marshal takes plain values only. What a request carries
    of its decision comes back as a plain tuple, as one saved by an older version does."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ADDONS": {Addon: 0}})
    manager = RobotsManager.for_crawler(crawler)
    manager.db.parse("http://site.test/robots.txt", b"User-agent: *\nDisallow: /private\n")
    request = Request("http://site.test/page")
    decision = manager.decider.decide_now(request)
    assert decision is not None
    assert decision.allowed
    queue = queue_class.from_crawler(crawler, str(tmp_path / "queue"))
    queue.push(request)
    saved = queue.pop()
    queue.close()
    assert saved is not None
    assert saved.url == request.url
    carried = carried_in(saved.meta)
    assert carried is not None
    assert carried.url == request.url
    assert carried.origin == "http://site.test"
    assert manager.carrier.fresh_for(carried, saved) > 0.0  # the downloader reuses it
