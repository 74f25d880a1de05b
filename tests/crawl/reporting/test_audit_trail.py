"""The audit trail (``ROBOTRULES_AUDIT``) of real crawls, read by ``robotrules audit``.

One line per decided request and one per robots.txt fetch, written through
Scrapy's feed storages, flushed at close; no credentials in any line; shadow
mode's lines are marked. A robots.txt that answers 503 every time makes the
unreachable outcome independent of timing.
"""

from __future__ import annotations

import errno
import io
import json
import logging
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy.extensions.feedexport import FileFeedStorage

from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.crawl.reporting.audit import AuditWriter
from scrapy_robotrules.engine.digests import sha256_of
from tests.helpers.cli import run
from tests.helpers.crawling import (
    USERINFO,
    RecordingSpider,
    as_scrapy_runs,
    async_test,
    not_reactorless,
    refused_crawl,
    run_spider,
    with_custom_settings,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.variants import GIVING_UP_SOON, forbidding_and_unreachable, stat

CRAWL_TESTS = True

ROBOTS = b"User-agent: *\nAllow: /private/open\nDisallow: /private\n"
SETTINGS = GIVING_UP_SOON


def _site(mockserver: MockServer) -> list[str]:
    paths = ["/public", "/private/1", "/private/open", "/private/2"]
    urls = forbidding_and_unreachable(mockserver, ROBOTS, paths)
    urls[3] = urls[3].replace("//", "//bob:s3cret@", 1)  # credentials, never to be shown
    return urls


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("ascii").splitlines()]


@async_test
async def test_one_line_per_decided_request_and_per_fetch_and_the_command_reads_them(
    mockserver: MockServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trail = tmp_path / "logs" / "audit.jsonl"
    urls = _site(mockserver)
    result = await run_spider(
        RecordingSpider, {**SETTINGS, "ROBOTRULES_AUDIT": str(trail)}, start_urls=urls
    )
    lines = _lines(trail)
    requests = [line for line in lines if line["event"] == "request"]
    fetches = [line for line in lines if line["event"] == "fetch"]
    decided = sum(stat(result, key) for key in ("allowed", "forbidden", "unreachable"))
    assert len(requests) == decided == len(urls)
    assert stat(result, "audit/lines") == len(lines)
    assert len(fetches) == RobotsManager.for_crawler(result.crawler).reporter.fetches >= 2
    by_url = {line["url"]: line for line in requests}
    private = by_url[mockserver.url("a.test", "/private/1")]
    assert private["decision"] == "forbidden"
    assert (private["rule"], private["line"], private["mode"]) == (
        "Disallow: /private",
        3,
        "enforce",
    )
    assert private["shadow"] is False
    assert private["robots_sha256"] == sha256_of(ROBOTS)
    assert by_url[mockserver.url("a.test", "/private/open")]["rule"] == "Allow: /private/open"
    assert by_url[mockserver.url("down.test", "/page")]["decision"] == "unreachable"
    # Credentials never reach a line: the URL is written without them.
    assert mockserver.url("a.test", "/private/2") in by_url
    assert "s3cret" not in trail.read_text("ascii")
    assert "bob" not in trail.read_text("ascii")
    fetched = {line["origin"]: line for line in fetches if line["outcome"] == "rules"}
    robots = fetched[mockserver.url("a.test", "/").rstrip("/")]
    assert (robots["status"], robots["bytes"]) == (200, len(ROBOTS))
    assert robots["sha256"] == sha256_of(ROBOTS)
    assert any(line["outcome"] == "unreachable" and line["status"] == 503 for line in fetches)

    code, out, _ = run(capsys, "audit", str(trail))
    assert code == 0
    assert "Disallow: /private (line 3)" in out
    assert "down.test" in out


@not_reactorless(USERINFO)
@async_test
async def test_shadow_lines_are_marked_shadow(mockserver: MockServer, tmp_path: Path) -> None:
    trail = tmp_path / "audit.jsonl"
    urls = _site(mockserver)
    settings = {**SETTINGS, "ROBOTRULES_AUDIT": f"file://{trail}", "ROBOTRULES_MODE": "shadow"}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    requests = [line for line in _lines(trail) if line["event"] == "request"]
    assert {line["mode"] for line in requests} == {"shadow"}
    shadowed = sorted(line["decision"] for line in requests if line["shadow"])
    assert shadowed == ["forbidden", "forbidden", "unreachable"]
    # Let through, all of them (Scrapy itself cannot download the URL with a password).
    assert not result.ignored
    assert len(result.crawled) == len(urls) - 1


@async_test
async def test_a_small_buffer_loses_no_line_and_a_trail_is_appended_to(
    mockserver: MockServer, tmp_path: Path
) -> None:
    trail = tmp_path / "audit.jsonl"
    urls = [mockserver.url("a.test", f"/public/{n}") for n in range(40)]
    mockserver.set_robots("a.test", Reply(body=ROBOTS))
    settings = {**SETTINGS, "ROBOTRULES_AUDIT": str(trail), "ROBOTRULES_AUDIT_BUFFER": 1}
    await run_spider(RecordingSpider, settings, start_urls=urls)
    first = _lines(trail)
    assert len(first) == 41
    await run_spider(RecordingSpider, settings, start_urls=urls[:1])
    assert _lines(trail)[:41] == first
    assert len(_lines(trail)) == 43


@async_test
async def test_an_audit_file_that_cannot_be_opened_stops_the_crawl_with_the_setting_named(
    mockserver: MockServer, tmp_path: Path
) -> None:
    (tmp_path / "taken").write_bytes(b"a file, not a directory")
    target = str(tmp_path / "taken" / "audit.jsonl")
    spider = with_custom_settings({"ROBOTRULES_AUDIT": target}, RecordingSpider)
    match = r"^ROBOTRULES_AUDIT: cannot write "
    await refused_crawl(spider, SETTINGS, match, start_urls=_site(mockserver)[:1])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("nosuch://bob:s3cret@host/audit.jsonl", "ROBOTRULES_AUDIT: no feed storage for 'nosuch'"),
        (12, "ROBOTRULES_AUDIT must be a path or a feed storage URI"),
    ],
)
@async_test
async def test_a_bad_audit_target_stops_the_crawl_without_showing_credentials(
    mockserver: MockServer, value: object, message: str
) -> None:
    spider = with_custom_settings({"ROBOTRULES_AUDIT": value}, RecordingSpider)
    error = await refused_crawl(spider, SETTINGS, f"^{message}", start_urls=_site(mockserver)[:1])
    assert "s3cret" not in str(error)


class _SlowFile(io.BytesIO):
    """A file whose writes in the writer thread wait until released."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def write(self, data: Any) -> int:
        if threading.current_thread() is not threading.main_thread():
            self.release.wait(10)
        return super().write(data)


@async_test
async def test_a_writer_behind_by_more_than_the_buffer_writes_on_the_reactor_thread_in_order() -> (
    None
):
    file = _SlowFile()
    synced: list[int] = []
    writer = AuditWriter(file, cap=2, on_sync=lambda: synced.append(1))
    writer.add("1")
    writer.add("2")  # a batch: to the thread, whose write waits
    assert not synced
    # Whether or not the thread took its batch yet, four lines or more are
    # behind now: written here (after the thread's batch, if it took it).
    threading.Timer(0.05, file.release.set).start()
    for line in "3456":
        writer.add(line)
    assert synced
    await as_scrapy_runs(writer.close())  # as Scrapy runs a signal handler
    assert file.getvalue() == b"1\n2\n3\n4\n5\n6\n"


@async_test
async def test_lines_name_the_policy_that_applied(mockserver: MockServer, tmp_path: Path) -> None:
    trail = tmp_path / "audit.jsonl"
    urls = _site(mockserver)
    policies = {"down.test": "ignore", "a.test": {"precedence": "first-match"}}
    settings = {**SETTINGS, "ROBOTRULES_AUDIT": str(trail), "ROBOTRULES_POLICIES": policies}
    await run_spider(RecordingSpider, settings, start_urls=urls)
    lines = _lines(trail)
    named = {
        (line["event"], line["origin"].split("//")[1].split(":")[0], line["policy"])
        for line in lines
    }
    assert ("request", "down.test", "down.test") in named
    assert ("request", "a.test", "a.test") in named
    assert ("fetch", "a.test", "a.test") in named
    assert all(line["policy"] is not None for line in lines)


class _SmallDisk(io.FileIO):
    """A file on a disk with room for ``ROOM`` bytes: a write past it takes what fits, then
    fails with ENOSPC, as a write to a full file system does."""

    ROOM = 4000

    def write(self, data: Any) -> int:
        room = self.ROOM - os.fstat(self.fileno()).st_size
        if room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().write(bytes(data)[:room])


class SmallDiskStorage(FileFeedStorage):
    """``smalldisk:///path``: a local file on a small disk, opened as ``open(path, "ab")`` is."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        super().__init__(uri.removeprefix("smalldisk://"), feed_options=feed_options)

    def open(self, spider: Spider) -> io.BufferedWriter:
        return io.BufferedWriter(_SmallDisk(self.path, "ab"))


def _errors(result: Any) -> list[logging.LogRecord]:
    return [record for record in result.records if record.levelno >= logging.ERROR]


@pytest.mark.parametrize("buffer", [1, 10_000])
@async_test
async def test_a_full_disk_keeps_whole_lines_and_counts_the_stored_and_the_lost(
    mockserver: MockServer, tmp_path: Path, buffer: int
) -> None:
    # With a buffer of 1 every line is written on its own, on the crawl's thread;
    # with 10 000 all of them go in one batch, in the writer thread at close.
    trail = tmp_path / "audit.jsonl"
    mockserver.set_robots("a.test", Reply(body=ROBOTS))
    urls = [mockserver.url("a.test", f"/public/{n}") for n in range(40)]
    settings = {
        **SETTINGS,
        "FEED_STORAGES": {"smalldisk": SmallDiskStorage},
        "ROBOTRULES_AUDIT": f"smalldisk://{trail}",
        "ROBOTRULES_AUDIT_BUFFER": buffer,
    }
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    text = trail.read_text("ascii")
    assert 0 < len(text) <= _SmallDisk.ROOM
    assert text.endswith("\n"), "a torn last line"
    lines = _lines(trail)  # every one whole JSON
    assert stat(result, "audit/lines") == len(lines)
    assert stat(result, "audit/lost") == len(urls) + 1 - len(lines) > 0
    (error,) = _errors(result)
    assert error.exc_info is None
    assert f"{stat(result, 'audit/lost')} lines lost" in error.getMessage()
    assert "No space left on device" in error.getMessage()


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port of 127.0.0.1 that refuses connections: bound, never listening."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield bound.getsockname()[1]


@async_test
async def test_an_upload_refused_at_close_is_one_error_and_every_line_lost(
    mockserver: MockServer, refusing_port: int
) -> None:
    urls = _site(mockserver)
    target = f"ftp://bob:s3cret@127.0.0.1:{refusing_port}/audit.jsonl"
    settings = {**SETTINGS, "ROBOTRULES_AUDIT": target}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    fetches = RobotsManager.for_crawler(result.crawler).reporter.fetches
    assert stat(result, "audit/lines") == 0
    assert stat(result, "audit/lost") == len(urls) + fetches
    (error,) = _errors(result)
    assert error.exc_info is None
    message = error.getMessage()
    assert message.startswith("The audit trail could not be stored (ConnectionRefusedError")
    assert f"{len(urls) + fetches} lines lost" in message
    assert not any("s3cret" in record.getMessage() for record in result.records)
