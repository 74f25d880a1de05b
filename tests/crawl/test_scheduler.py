"""The robots.txt scheduler: it wraps the configured one and sees every request to be scheduled.

Real crawls against the local test server, with a scheduler of the
project's own (a recording subclass of Scrapy's) configured as ``SCHEDULER``:
the add-on keeps it inside, and what reaches it is what robots.txt allows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

from scrapy import Request, Spider
from scrapy.core.scheduler import Scheduler
from scrapy.http import Response
from scrapy.settings import Settings
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler

from scrapy_robotrules import Addon, RobotRulesScheduler
from scrapy_robotrules.crawl import compat
from tests.helpers.crawling import RecordingSpider, async_test, run_spider
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import OURS, stat

CRAWL_TESTS = True

REFUSING = b"User-agent: *\nDisallow: /*refused\n"


class RecordingScheduler(Scheduler):
    """Scrapy's scheduler, recording the URL of each request it is given."""

    given: ClassVar[list[str]] = []

    def enqueue_request(self, request: Request) -> bool:
        type(self).given.append(request.url)
        return super().enqueue_request(request)


class EveryKindSpider(RecordingSpider):
    """Schedules requests every way Scrapy has: start, callback, a component, a redirect.

    Those with ``refused`` in their path have no errback: a drop is told of
    by ``request_dropped`` alone.
    """

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.crawled.append(response.url)
        if response.url.endswith("/start"):
            engine = compat.engine(self.crawler)
            assert engine is not None
            engine.crawl(self.request(response.urljoin("/by-component")))
            engine.crawl(Request(response.urljoin("/by-component-refused")))
            yield self.request(response.urljoin("/yielded"))
            yield Request(response.urljoin("/yielded-refused"))
            yield self.request(response.urljoin("/moved"))


@async_test
async def test_every_request_to_be_scheduled_is_decided_before_the_configured_scheduler(
    mockserver: MockServer,
) -> None:
    def url(path: str) -> str:
        return mockserver.url("site.test", path)

    mockserver.set_robots("site.test", Reply(body=REFUSING))
    mockserver.set_page("site.test", "/moved", Reply(302, redirect_to=url("/moved-refused")))
    RecordingScheduler.given = []

    class Starting(EveryKindSpider):
        async def start(self) -> AsyncIterator[Request]:
            yield self.request(url("/start"))
            yield Request(url("/start-refused"))

    settings = {**OURS, "SCHEDULER": f"{__name__}.RecordingScheduler"}
    result = await run_spider(Starting, settings)
    assert result.crawler.settings["ROBOTRULES_SCHEDULER"] == f"{__name__}.RecordingScheduler"
    assert load_object(result.crawler.settings["SCHEDULER"]) is RobotRulesScheduler
    allowed = [url(path) for path in ("/start", "/by-component", "/yielded", "/moved")]
    # The inner scheduler was given what robots.txt allows, and nothing else but the
    # refused redirect, which has the errback of the request it came from: queued for
    # the downloader middleware to raise why, to that errback.
    assert sorted(RecordingScheduler.given) == sorted([*allowed, url("/moved-refused")])
    assert sorted(result.crawled) == sorted(u for u in allowed if not u.endswith("/moved"))
    refused = [url(p) for p in ("/start-refused", "/by-component-refused", "/yielded-refused")]
    assert sorted(result.dropped) == sorted(refused)
    assert [(u, type(e).__name__) for u, e in result.failures] == [
        (url("/moved"), "RobotsTxtForbidden")
    ]
    assert not any("refused" in record.path for record in mockserver.requests)
    assert stat(result, "offered") == 8
    assert stat(result, "forbidden") == 4


def test_the_add_on_keeps_a_scheduler_the_project_configured_inside_at_its_priority() -> None:
    settings = Settings({"SCHEDULER": "scrapy_redis.scheduler.Scheduler"}, priority="project")
    Addon().update_settings(settings)
    assert settings["SCHEDULER"] is RobotRulesScheduler
    assert settings.getpriority("SCHEDULER") == settings.getpriority("ROBOTRULES_SCHEDULER")
    assert settings["ROBOTRULES_SCHEDULER"] == "scrapy_redis.scheduler.Scheduler"
    # Named already (a project set up by hand): nothing moves.
    settings = Settings(
        {"SCHEDULER": "scrapy_robotrules.RobotRulesScheduler", "ROBOTRULES_SCHEDULER": None}
    )
    Addon().update_settings(settings)
    assert settings["SCHEDULER"] == "scrapy_robotrules.RobotRulesScheduler"
    assert settings["ROBOTRULES_SCHEDULER"] is None


def test_a_crawl_that_does_not_obey_robots_txt_passes_every_request_on() -> None:
    crawler = get_crawler(Spider, {"ROBOTSTXT_OBEY": False})
    scheduler = RobotRulesScheduler.from_crawler(crawler)
    assert scheduler.obeys is False
    assert type(scheduler.inner) is Scheduler
