"""Shadow mode (``ROBOTRULES_MODE = "shadow"``): decided and counted, let through.

The same site is crawled in enforce mode and in shadow mode: the decision
stats are equal, shadow mode downloads the pages enforce mode drops, and
counts them as ``shadow/would_forbid`` (robots.txt forbids them) and
``shadow/would_hold`` (their robots.txt stayed unreachable). An unreachable
robots.txt answers 503 every time, so the outcome does not hang on timing.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.helpers.crawling import (
    RecordingSpider,
    async_test,
    refused_crawl,
    run_spider,
    with_custom_settings,
)
from tests.helpers.mockserver import MockServer
from tests.helpers.variants import GIVING_UP_SOON, forbidding_and_unreachable, paths, stat

CRAWL_TESTS = True

ROBOTS = b"User-agent: *\nDisallow: /private\n"
DECISION_STATS = ("offered", "allowed", "forbidden", "unreachable", "parked", "unchecked")


def _site(mockserver: MockServer) -> list[str]:
    return forbidding_and_unreachable(mockserver, ROBOTS, ["/public", "/private/1", "/private/2"])


SETTINGS = GIVING_UP_SOON


class ShadowSpider(RecordingSpider):
    robotrules_mode = "shadow"


@async_test
async def test_shadow_mode_counts_as_enforce_mode_does_and_lets_the_requests_through(
    mockserver: MockServer,
) -> None:
    urls = _site(mockserver)
    enforce = await run_spider(RecordingSpider, SETTINGS, start_urls=urls)
    shadow = await run_spider(
        RecordingSpider, {**SETTINGS, "ROBOTRULES_MODE": "shadow"}, start_urls=urls
    )
    for key in DECISION_STATS:
        assert stat(shadow, key) == stat(enforce, key), key
    assert stat(enforce, "forbidden") == 2
    assert stat(enforce, "unreachable") == 1
    assert paths(enforce, enforce.crawled) == ["public"]
    assert paths(shadow, shadow.crawled) == paths(shadow, urls)
    assert not shadow.failures
    assert stat(shadow, "shadow/would_forbid") == stat(shadow, "forbidden") == 2
    assert stat(shadow, "shadow/would_hold") == stat(shadow, "unreachable") == 1
    assert stat(enforce, "shadow/would_forbid") == stat(enforce, "shadow/would_hold") == 0
    # Logged: per request at DEBUG, as enforce mode logs its drops, and once at close.
    let_through = shadow.messages("Shadow mode: letting", logging.DEBUG)
    assert len(let_through) == 3
    assert all("user" not in line for line in let_through)
    closing = shadow.messages("Shadow mode: 2 requests robots.txt forbids and 1", logging.INFO)
    assert len(closing) == 1
    assert not enforce.messages("Shadow mode")


@async_test
async def test_the_spider_attribute_chooses_the_mode(mockserver: MockServer) -> None:
    urls = _site(mockserver)[:3]
    result = await run_spider(
        ShadowSpider, {**SETTINGS, "ROBOTRULES_MODE": "enforce"}, start_urls=urls
    )
    assert paths(result, result.crawled) == paths(result, urls)
    assert stat(result, "shadow/would_forbid") == 2


class _BadAttribute(RecordingSpider):
    robotrules_mode = 1


@pytest.mark.parametrize(
    ("settings", "spider", "message"),
    [
        ({"ROBOTRULES_MODE": "dry"}, RecordingSpider, "ROBOTRULES_MODE must be one of"),
        (
            {"ROBOTRULES_MODE": "shadow"},
            _BadAttribute,
            r"robotrules_mode \(attribute of spider 'recording'\) must be one of",
        ),
    ],
)
@async_test
async def test_a_bad_mode_stops_the_crawl_with_the_setting_named(
    mockserver: MockServer, settings: dict[str, Any], spider: type[RecordingSpider], message: str
) -> None:
    spider = with_custom_settings(settings, spider)
    await refused_crawl(spider, SETTINGS, f"^{message}", start_urls=_site(mockserver)[:1])
