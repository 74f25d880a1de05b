"""A refused request costs the same whatever the robots.txt's ``License`` line says.

Counted in bytes, never timed: a real crawl of a file whose ``License``
line is 450,000 characters long and whose ``Content-Usage`` line refuses
``train-ai``, a few hundred requests refused, each with its audit line. The
reasons the requests were dropped with and the audit trail's lines stay
within a bound that is not the licence's length.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from scrapy_robotrules.crawl.exceptions import RobotsTxtForbidden
from scrapy_robotrules.engine.operator_tools.audit_trail import MAX_TEXT
from scrapy_robotrules.engine.robots.signal_lines import MAX_LICENSE_URL
from tests.helpers.crawling import (
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.usage import SETTINGS, UsageSpider

pytestmark = pytest.mark.performance
CRAWL_TESTS = True

HOST = "licensed.test"
LICENCE = "https://lic.test/" + "x" * 450_000
ROBOTS = f"User-agent: *\nContent-Usage: /p/ train-ai=n\nLicense: {LICENCE}\n".encode()
REFUSED = 300
REQUEST_LINE = 1024
"""Bytes of a request's audit line besides its reason and URL: its other fields."""


@async_test
async def test_refused_requests_and_their_audit_lines_stay_small(
    mockserver: MockServer, tmp_path: Path
) -> None:
    mockserver.set_robots(HOST, Reply(body=ROBOTS))
    trail = tmp_path / "audit.jsonl"
    urls = [mockserver.url(HOST, f"/p/{i}") for i in range(REFUSED)]
    settings = {**SETTINGS, "ROBOTRULES_PURPOSES": ["train-ai"], "ROBOTRULES_AUDIT": str(trail)}
    result = await run_spider(UsageSpider, settings, start_urls=urls)

    stats = result.stats
    assert stats["robotrules/usage/forbidden"] == REFUSED
    assert stats["robotrules/usage/licenses_cut"] == 1  # the one file, as it was read
    (said,) = result.messages("its License lines were cut", logging.INFO)
    assert (
        "robots.txt line 3: a License value of 450,017 characters, cut to its first 2,048" in said
    )
    assert not mockserver.requests_for(HOST, "/p/0")
    # Each refusal's reason names the licence, short: a few hundred bytes, not 450,000.
    reasons = [exc.reason for _, exc in result.failures if isinstance(exc, RobotsTxtForbidden)]
    assert len(reasons) == REFUSED
    assert all("License: https://lic.test/xxx" in reason for reason in reasons)
    assert max(len(reason.encode()) for reason in reasons) < 600
    # The audit trail: each request line within its bound, the fetch line's licence cut.
    raw = trail.read_bytes().splitlines()
    lines = [json.loads(line) for line in raw]
    requests = [len(b) for b, line in zip(raw, lines, strict=True) if line["event"] == "request"]
    assert len(requests) == REFUSED
    assert max(requests) < REQUEST_LINE + MAX_TEXT + len(urls[-1])
    assert max(requests) < 1500
    (fetch,) = [line for line in lines if line["event"] == "fetch"]
    assert [len(url) for url in fetch["licenses"]] == [MAX_LICENSE_URL]
    assert len(trail.read_bytes()) < REFUSED * 1500 + 2 * MAX_LICENSE_URL + REQUEST_LINE
