"""The robots.txt archive of a real crawl with a shared store.

Each robots.txt body fetched is archived by its SHA-256, the name the
audit line gives it, and ``robotrules archive`` gives back the exact bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scrapy_robotrules.engine.digests import sha256_of
from tests.helpers.cli import run_binary
from tests.helpers.crawling import RecordingSpider, async_test, run_spider
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import OURS, stat

CRAWL_TESTS = True

# Not UTF-8, CRLF line ends, a BOM: the archive keeps bytes, not text.
ROBOTS = {
    "a.test": b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /caf\xe9\r\nDisallow: /private\r\n",
    "b.test": b"User-agent: *\nAllow: /\n# b\n",
}


def _site(mockserver: MockServer) -> list[str]:
    for host, body in ROBOTS.items():
        mockserver.set_robots(host, Reply(body=body))
    return [mockserver.url(host, path) for host in ROBOTS for path in ("/public", "/private/1")]


@async_test
async def test_the_audit_lines_sha256_gives_back_the_robots_txt_through_the_command(
    mockserver: MockServer, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    store = f"sqlite://{tmp_path}/robots.db"
    trail = tmp_path / "audit.jsonl"
    settings: dict[str, Any] = {**OURS, "ROBOTRULES_STORE": store, "ROBOTRULES_AUDIT": str(trail)}
    result = await run_spider(RecordingSpider, settings, start_urls=_site(mockserver))
    lines = [json.loads(line) for line in trail.read_text("ascii").splitlines()]
    named = {line["origin"]: line["robots_sha256"] for line in lines if line["event"] == "request"}
    named_by_fetch = {line["origin"]: line["sha256"] for line in lines if line["event"] == "fetch"}
    assert named == named_by_fetch
    assert len(named) == len(ROBOTS) == stat(result, "store/archived")
    for origin, sha in named.items():
        host = origin.split("//")[1].split(":")[0]
        assert sha == sha256_of(ROBOTS[host])
        assert run_binary(capsysbinary, "archive", store, sha) == (0, ROBOTS[host], "")


@async_test
async def test_bodies_are_archived_without_an_audit_trail_and_not_by_the_memory_store(
    mockserver: MockServer, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    store = f"sqlite://{tmp_path}/robots.db"
    urls = _site(mockserver)
    result = await run_spider(RecordingSpider, {**OURS, "ROBOTRULES_STORE": store}, start_urls=urls)
    assert stat(result, "store/archived") == len(ROBOTS)
    sha = sha256_of(ROBOTS["a.test"])
    assert run_binary(capsysbinary, "archive", store, sha) == (0, ROBOTS["a.test"], "")
    result = await run_spider(RecordingSpider, OURS, start_urls=urls)
    assert stat(result, "store/archived") == 0
