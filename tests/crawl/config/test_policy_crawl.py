"""Per-site policy (ROBOTRULES_POLICIES) in real crawls: each applies to its hosts only.

Two hosts serve the same robots.txt; the policy names one of them. The
server counts robots.txt requests per host.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from scrapy_robotrules.crawl.config.settings import RobotRulesSettingError
from scrapy_robotrules.crawl.manager import RobotsManager
from tests.helpers.crawling import RecordingSpider, async_test, run_spider, with_custom_settings
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.slots import SLOT_LOG, assert_released_apart, pages_released
from tests.helpers.variants import OURS, stat

CRAWL_TESTS = True

FORBIDS = b"User-agent: *\nDisallow: /private\n"


def _robots(server: MockServer, host: str) -> int:
    return len(server.requests_for(host, "/robots.txt"))


def _urls(server: MockServer, *hosts: str) -> list[str]:
    return [server.url(h, p) for h in hosts for p in ("/private/a", "/public")]


async def _crawl(server: MockServer, policies: Any) -> Any:
    for host in ("with.test", "without.test"):
        server.set_robots(host, Reply(body=FORBIDS))
    return await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_POLICIES": policies},
        start_urls=_urls(server, "with.test", "without.test"),
    )


@async_test
async def test_ignore_fetches_no_robots_txt_and_allows_every_request(
    mockserver: MockServer,
) -> None:
    result = await _crawl(mockserver, {"with.test": "ignore"})
    assert _robots(mockserver, "with.test") == 0
    assert _robots(mockserver, "without.test") == 1
    assert mockserver.url("with.test", "/private/a") in result.crawled
    assert result.ignored == [mockserver.url("without.test", "/private/a")]
    assert stat(result, "policy/ignored") == 2
    assert stat(result, "forbidden") == 1


@async_test
async def test_a_custom_robots_txt_decides_instead_of_the_sites(mockserver: MockServer) -> None:
    own = "User-agent: *\nDisallow: /public\n"
    result = await _crawl(mockserver, {"with.test": {"robots_txt": own}})
    assert _robots(mockserver, "with.test") == 0
    assert sorted(result.ignored) == sorted(
        [mockserver.url("with.test", "/public"), mockserver.url("without.test", "/private/a")]
    )
    [why] = [str(exc) for url, exc in result.failures if "with.test" in url]
    assert "Disallow: /public" in why
    assert "policy for with.test: robots_txt of the operator's own" in why
    assert result.messages("policy for with.test", level=logging.DEBUG)


@async_test
async def test_another_agent_for_one_host(mockserver: MockServer) -> None:
    robots = b"User-agent: otherbot\nDisallow: /public\n\nUser-agent: *\nDisallow: /private\n"
    for host in ("with.test", "without.test"):
        mockserver.set_robots(host, Reply(body=robots))
    result = await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_POLICIES": {"with.test": {"user_agent": "OtherBot/2.0"}}},
        start_urls=_urls(mockserver, "with.test", "without.test"),
    )
    assert sorted(result.ignored) == sorted(
        [mockserver.url("with.test", "/public"), mockserver.url("without.test", "/private/a")]
    )
    [why] = [str(exc) for url, exc in result.failures if "with.test" in url]
    assert "policy for with.test: user_agent OtherBot/2.0" in why


@async_test
async def test_another_precedence_for_a_wildcard(mockserver: MockServer) -> None:
    # most-specific: the longer Allow wins; first-match: the first Disallow does.
    robots = b"User-agent: *\nDisallow: /p\nAllow: /public\n"
    for host in ("a.with.test", "without.test"):
        mockserver.set_robots(host, Reply(body=robots))
    result = await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_POLICIES": {"*.with.test": {"precedence": "first-match"}}},
        start_urls=[mockserver.url(h, "/public") for h in ("a.with.test", "without.test")],
    )
    assert result.ignored == [mockserver.url("a.with.test", "/public")]
    assert result.crawled == [mockserver.url("without.test", "/public")]


@async_test
async def test_unauthorized_policy_for_one_host(mockserver: MockServer) -> None:
    for host in ("with.test", "without.test"):
        mockserver.set_robots(host, Reply(401))
    result = await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_POLICIES": {"with.test": {"unauthorized": "disallow"}}},
        start_urls=[mockserver.url(h, "/public") for h in ("with.test", "without.test")],
    )
    assert result.ignored == [mockserver.url("with.test", "/public")]
    assert result.crawled == [mockserver.url("without.test", "/public")]


@async_test
async def test_max_crawl_delay_skip_drops_one_sites_requests(mockserver: MockServer) -> None:
    slow = b"User-agent: *\nCrawl-delay: 120\n"
    for host in ("with.test", "without.test"):
        mockserver.set_robots(host, Reply(body=slow))
    policies = {"with.test": {"max_crawl_delay": 10, "max_crawl_delay_action": "skip"}}
    result = await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_POLICIES": policies, "ROBOTRULES_MAX_CRAWL_DELAY": 0.1},
        start_urls=[mockserver.url(h, "/public") for h in ("with.test", "without.test")],
    )
    # The other host keeps the project's clamp (0.1 s) and is crawled.
    assert result.crawled == [mockserver.url("without.test", "/public")]
    assert result.ignored == [mockserver.url("with.test", "/public")]
    [why] = [str(exc) for _, exc in result.failures]
    assert "Crawl-delay of 120 s, above the max_crawl_delay of the policy for with.test" in why
    assert stat(result, "origins/skipped") == 1
    assert result.messages("Skipping http://with.test", level=logging.WARNING)


@async_test
async def test_project_action_skip_without_policies(mockserver: MockServer) -> None:
    mockserver.set_robots("slow.test", Reply(body=b"User-agent: *\nCrawl-delay: 120\n"))
    mockserver.set_robots("fast.test", Reply(body=b"User-agent: *\nDisallow:\n"))
    result = await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_MAX_CRAWL_DELAY_ACTION": "skip"},
        start_urls=[mockserver.url(h, "/x") for h in ("slow.test", "fast.test")],
    )
    assert result.crawled == [mockserver.url("fast.test", "/x")]
    [why] = [str(exc) for _, exc in result.failures]
    assert "above ROBOTRULES_MAX_CRAWL_DELAY (60 s)" in why


@async_test
async def test_a_policy_crawl_delay_paces_its_host_only(mockserver: MockServer) -> None:
    for host in ("with.test", "other.test"):
        mockserver.set_robots(host, Reply(body=b"User-agent: *\nDisallow:\n"))
    result = await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_POLICIES": {"with.test": {"crawl_delay": 0.4}}, **SLOT_LOG},
        start_urls=[
            mockserver.url(h, f"/{n}") for h in ("with.test", "other.test") for n in range(3)
        ],
    )
    assert len(result.crawled) == 6
    assert_released_apart(pages_released(result.crawler, "with.test"), 0.4)
    assert {page.delay for page in pages_released(result.crawler, "other.test")} == {0.0}
    manager = RobotsManager.for_crawler(result.crawler)
    assert manager.politeness.crawl_delay(Request(mockserver.url("other.test", "/"))) is None
    assert stat(result, "crawl_delay/applied") >= 1
    assert result.messages("Crawl-delay for", logging.INFO) == [
        f"Crawl-delay for {mockserver.url('with.test', '')}: 0.4 s"
        " (policy for with.test: crawl_delay 0.4 s)"
    ]


@async_test
async def test_a_custom_robots_txts_crawl_delay_paces_its_host(mockserver: MockServer) -> None:
    own = "User-agent: *\nCrawl-delay: 0.4\n"
    result = await run_spider(
        RecordingSpider,
        {**OURS, "ROBOTRULES_POLICIES": {"with.test": {"robots_txt": own}}, **SLOT_LOG},
        start_urls=[mockserver.url("with.test", f"/{n}") for n in range(3)],
    )
    assert len(result.crawled) == 3
    assert mockserver.requests_for("with.test", "/robots.txt") == []
    assert result.messages("Crawl-delay for", logging.INFO) == [
        f"Crawl-delay for {mockserver.url('with.test', '')}: 0.4 s"
        " (the robots_txt of the policy for with.test: Crawl-delay: 0.4)"
    ]
    assert_released_apart(pages_released(result.crawler, "with.test"), 0.4)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"a.test": {"precedence": "longest"}}, "['precedence'] must be one of"),
        ({"a.test": {"precedance": "first-match"}}, "did you mean 'precedence'?"),
        ("{not json", "must be a dict or a JSON object"),
    ],
)
def test_a_bad_policy_stops_the_crawl_with_one_message(value: object, message: str) -> None:
    spider = with_custom_settings({"ROBOTRULES_POLICIES": value}, RecordingSpider)
    with pytest.raises(RobotRulesSettingError, match="ROBOTRULES_POLICIES") as caught:
        RobotsManager.for_crawler(get_crawler(spider, OURS))
    assert message in str(caught.value)
    # In the project's settings, the add-on refuses it before any crawler is made.
    with pytest.raises(SystemExit, match=r"^scrapy-robotrules: ROBOTRULES_POLICIES") as ended:
        get_crawler(settings_dict={**OURS, "ROBOTRULES_POLICIES": value})
    assert message in str(ended.value)


def test_a_bad_max_crawl_delay_action_stops_the_crawl() -> None:
    spider = with_custom_settings({"ROBOTRULES_MAX_CRAWL_DELAY_ACTION": "wait"}, RecordingSpider)
    with pytest.raises(RobotRulesSettingError, match="ROBOTRULES_MAX_CRAWL_DELAY_ACTION"):
        RobotsManager.for_crawler(get_crawler(spider, OURS))
