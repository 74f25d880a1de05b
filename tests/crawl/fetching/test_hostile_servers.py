"""Hostile robots.txt servers and inputs: real crawls, each request accounted for.

Each test scripts one way a robots.txt server misbehaves (``MockServer``),
crawls with the add-on, and checks the decision (crawled or dropped), the
``robotrules/`` stats, the log line that says why, and that nothing is lost:
every request the middleware checked is counted once as allowed, forbidden or
unreachable, and every start URL is either crawled or dropped with a reason.

Behaviours already covered by ``test_middleware.py`` are not repeated here:
timeouts, resets mid-body, redirect chains, loops and other hosts, 401/403,
404, 429/500/503 then 200, unresolvable hosts and refused connections.
"""

from __future__ import annotations

import functools
import gzip
import logging
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from scrapy import signals as scrapy_signals
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from twisted.internet.protocol import Factory, Protocol

from scrapy_robotrules import Outcome
from scrapy_robotrules.crawl.manager import RobotsManager
from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE
from scrapy_robotrules.engine.stores import Entry
from tests.helpers.cli import run
from tests.helpers.crawling import (
    TLS_ERRORS,
    CrawlResult,
    RecordingSpider,
    async_test,
    download_error,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    not_reactorless,
    reactorless,
    run_spider,
    until,
)
from tests.helpers.mockserver import MockServer, Reply, get_reactor
from tests.helpers.variants import Step, StepSpider, pause, settled

CRAWL_TESTS = True
"""Run under both reactors in CI."""

SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "RETRY_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 1.0,
    "ADDONS": {"scrapy_robotrules.Addon": 0},
    "ROBOTRULES_RETRY_DELAY": 0.2,
    "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.5,
}
"""The add-on as users turn it on, with short waits."""

PRIVATE = b"User-agent: *\nDisallow: /private\n"


def stat(result: CrawlResult[Any], key: str) -> Any:
    return result.stats.get(f"robotrules/{key}", 0)


def accounted(result: CrawlResult[Any], urls: Sequence[str]) -> tuple[list[str], list[str]]:
    """Check nothing was lost; return the crawled URLs and the dropped ones, sorted.

    Every URL was checked by the middleware, so allowed + forbidden +
    unreachable is their number; each was crawled or dropped with a reason,
    never both, never neither.
    """
    checked = stat(result, "allowed") + stat(result, "forbidden") + stat(result, "unreachable")
    assert checked == len(urls)
    crawled = sorted(result.crawled)
    dropped = sorted(result.ignored + result.dropped)
    assert sorted(crawled + dropped) == sorted(urls)
    for _, exc in result.failures:
        assert str(exc)  # the reason
    assert stat(result, "allowed") == len(crawled)
    return crawled, dropped


def entry_of(result: CrawlResult[Any], url: str) -> Entry:
    entry = RobotsManager.for_crawler(result.crawler).db.entry(url)
    assert entry is not None
    return entry


def robots_fetches(mockserver: MockServer, host: str) -> int:
    return len(mockserver.requests_for(host, "/robots.txt"))


# Size.


@async_test
async def test_a_body_larger_than_max_size_is_cut_and_counted(mockserver: MockServer) -> None:
    head = b"User-agent: *\nDisallow: /early\n"
    body = head + b"# padding\n" * 50 + b"Disallow: /late\n"
    mockserver.set_robots("big.test", Reply(body=body))
    urls = [mockserver.url("big.test", p) for p in ("/early", "/late", "/other")]
    settings = {**SETTINGS, "ROBOTRULES_MAX_SIZE": len(head) + 50}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    crawled, dropped = accounted(result, urls)
    # The rule after the limit has no effect.
    assert (crawled, dropped) == (sorted(urls[1:]), [urls[0]])
    assert "Disallow: /early (line 2)" in str(result.failures[0][1])
    assert stat(result, "truncated") == 1
    assert (stat(result, "allowed"), stat(result, "forbidden")) == (2, 1)
    robots = entry_of(result, urls[0]).robots
    assert robots is not None
    assert robots.truncated
    assert result.messages(
        f"robots.txt of {mockserver.url('big.test', '')} is larger than ROBOTRULES_MAX_SIZE"
        f" ({len(body)} > {len(head) + 50} bytes)",
        logging.INFO,
    )


_GZIP = {"Content-Encoding": "gzip"}


@functools.cache
def _gzip_bomb() -> tuple[bytes, int]:
    """About 10 MB of rules, gzipped to a few KB; and the unpacked size."""
    rules = b"User-agent: *\nDisallow: /\n" + b"Disallow: /x\n" * 800_000
    return gzip.compress(rules, compresslevel=9), len(rules)


@async_test
async def test_a_gzip_bomb_is_read_as_far_as_max_size_and_its_rules_apply(
    mockserver: MockServer,
) -> None:
    bomb, unpacked = _gzip_bomb()
    assert len(bomb) < 50_000
    assert unpacked > 10_000_000
    mockserver.set_robots("bomb.test", Reply(body=bomb, gzip=False, headers=_GZIP))
    urls = [mockserver.url("bomb.test", f"/{n}") for n in range(3)]
    result = await run_spider(RecordingSpider, SETTINGS, start_urls=urls)
    crawled, dropped = accounted(result, urls)
    assert (crawled, dropped) == ([], sorted(urls))
    for _, exc in result.failures:
        # Its first lines decide (RFC 9309 §2.5: the first 500 KiB are parsed).
        assert str(exc) == "Forbidden by robots.txt: disallowed by Disallow: / (line 2)"
    assert stat(result, "forbidden") == 3
    assert stat(result, "truncated") == 1
    assert stat(result, "origins/unreachable") == 0
    # Unpacked here, only as far as it is read (its size unknown); Scrapy unpacked nothing.
    assert result.messages("(more than 512000 bytes)", logging.INFO)
    assert "httpcompression/response_bytes" not in result.stats


@async_test
async def test_a_gzipped_body_larger_than_max_size_is_cut_like_a_plain_one(
    mockserver: MockServer,
) -> None:
    # Under the download limit, over the parse limit: read as far as the limit.
    body = PRIVATE + b"# padding\n" * 500 + b"Disallow: /late\n"
    mockserver.set_robots("zipped.test", Reply(body=body, gzip=True))
    urls = [mockserver.url("zipped.test", p) for p in ("/private", "/late")]
    settings = {**SETTINGS, "ROBOTRULES_MAX_SIZE": 1_000}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    crawled, dropped = accounted(result, urls)
    assert (crawled, dropped) == ([urls[1]], [urls[0]])
    assert stat(result, "truncated") == 1
    assert result.messages("is larger than ROBOTRULES_MAX_SIZE", logging.INFO)


TEN_MB = 10_000_000
CHUNK = 16_384
"""How much the server sends at a time (``Reply.chunk``), each once the client took the last."""
HEAD = b"User-agent: *\nDisallow: /early\n"
PAST_THE_CAP = b"Disallow: /late\nAllow: /early/open\n"
"""Rules a crawler reading only ROBOTRULES_MAX_SIZE bytes never sees."""
OVERSIZE_PATHS = ("/early", "/early/open", "/late", "/other")


@functools.cache
def _oversize_files() -> dict[str, bytes]:
    """10 MB robots.txt files, their rules after the first 500 KiB repeated after the cap.

    ``plain`` pads with comments; ``gzip`` with random hexadecimal comments,
    which gzip only halves, so that even compressed the file is past the cap.
    """
    plain = HEAD + b"# padding\n" * 60_000 + PAST_THE_CAP
    plain += b"# padding\n" * ((TEN_MB - len(plain)) // 10)
    noise = random.Random(9309).randbytes(TEN_MB // 2).hex().encode()
    lines = b"\n".join(b"# " + noise[at : at + 60] for at in range(0, len(noise), 60))
    zipped = HEAD + lines[:600_000] + b"\n" + PAST_THE_CAP + lines[600_000:] + b"\n"
    return {"plain": plain, "gzip": zipped}


async def settled_or_unreachable(spider: StepSpider) -> None:
    """A step: wait for the fetch under way; an unreachable robots.txt is fetched for ever."""
    stats = spider.crawler.stats
    assert stats is not None
    await until(
        lambda: (
            not spider.manager().parking.pending()
            or bool(stats.get_value("robotrules/origins/unreachable"))
        )
    )


def _check_verdicts(capsys: pytest.CaptureFixture[str], robots: Path) -> dict[str, str]:
    """What ``robotrules check`` answers for each of OVERSIZE_PATHS: path to its line."""
    _, out, _ = run(capsys, "check", str(robots), *OVERSIZE_PATHS)
    verdicts = {}
    for line in out.splitlines():
        verdict, path, why = line.split(maxsplit=2)
        verdicts[path] = f"{verdict} {why}"
    return verdicts


READ_CHUNK = 131_072 + 262_144 if reactorless() else 65_536
"""The most a download handler hands over at once: Twisted's 64 KiB reads; without a reactor,
aiohttp's ``iter_any``, all its stream buffered: up to its 128 KiB high-water mark, plus one
socket read of asyncio's (256 KiB) that crossed it."""


@pytest.mark.parametrize("coding", ["plain", "gzip"])
@async_test
async def test_a_robots_txt_larger_than_every_limit_is_read_up_to_max_size(
    mockserver: MockServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], coding: str
) -> None:
    # RFC 9309 §2.5: 10 MB announced by its Content-Length, over DOWNLOAD_MAXSIZE
    # too, decided by its first ROBOTRULES_MAX_SIZE bytes, as the command line does.
    body = _oversize_files()[coding]
    sent = gzip.compress(body, compresslevel=1) if coding == "gzip" else body
    assert len(sent) > 4_000_000
    headers = _GZIP if coding == "gzip" else {}
    mockserver.set_robots("huge.test", Reply(body=sent, headers=headers, chunk=CHUNK))
    robots_file = tmp_path / "robots.txt"
    robots_file.write_bytes(body)
    expected = _check_verdicts(capsys, robots_file)
    assert expected["/early/open"].startswith("disallowed")  # the Allow past the cap is unread
    assert expected["/late"].startswith("allowed")
    downloaded: list[Response] = []

    def watch(spider: StepSpider) -> None:
        def record(response: Response) -> None:
            if response.url.endswith("/robots.txt"):
                downloaded.append(response)

        spider.crawler.signals.connect(record, scrapy_signals.response_downloaded, weak=False)

    url = functools.partial(mockserver.url, "huge.test")
    # The last request finds the rules past their age: the file is fetched again.
    first = [url(p) for p in OVERSIZE_PATHS[:3]]
    steps: list[Step] = [watch, *first, pause(1.1), url("/other"), settled_or_unreachable]
    settings = {**SETTINGS, "DOWNLOAD_MAXSIZE": 1_000_000, "ROBOTRULES_MAX_AGE": 1.0}
    result = await run_spider(StepSpider, settings, steps=steps)
    urls = [url(p) for p in OVERSIZE_PATHS]
    crawled, _ = accounted(result, urls)
    for path in OVERSIZE_PATHS:
        verdict = "allowed" if url(path) in crawled else "disallowed"
        assert expected[path].startswith(verdict), path
    for _, exc in result.failures:
        assert str(exc) == "Forbidden by robots.txt: disallowed by Disallow: /early (line 2)"
    fetches = robots_fetches(mockserver, "huge.test")
    assert fetches >= 2
    assert stat(result, "truncated") == fetches
    assert stat(result, "origins/unreachable") == 0
    assert entry_of(result, urls[0]).outcome is Outcome.RULES
    # One line, however often the file is fetched, naming the setting that cut it.
    [line] = result.messages("ROBOTRULES_MAX_SIZE")
    size = f"{len(sent)} > {DEFAULT_MAX_SIZE}" if coding == "plain" else f"than {DEFAULT_MAX_SIZE}"
    assert size in line
    assert not result.messages("download max size")
    # Read no further than the limit: each download stopped within a chunk of it.
    assert [response.flags for response in downloaded] == [["download_stopped"]] * fetches
    for response in downloaded:
        assert len(response.body) < DEFAULT_MAX_SIZE + 4 + READ_CHUNK
    assert mockserver.sent("huge.test") < len(sent) // 4


@async_test
async def test_without_robots_body_middleware_a_body_far_past_the_limit_is_refused(
    mockserver: MockServer,
) -> None:
    # Scrapy then unpacks whole bodies: the download is not stopped, and one
    # sent past ten times the limit is refused (unreachable), never unpacked.
    mockserver.set_robots("plain.test", Reply(body=_oversize_files()["plain"], chunk=CHUNK))
    urls = [mockserver.url("plain.test", "/late")]
    middlewares = {"scrapy_robotrules.RobotsBodyMiddleware": None}
    settings = {**SETTINGS, "DOWNLOADER_MIDDLEWARES": middlewares}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    _, dropped = accounted(result, urls)
    assert dropped == urls
    assert stat(result, "origins/unreachable") == 1
    assert result.messages("larger than download max size (5120000)", logging.WARNING)


@async_test
async def test_a_retried_robots_txt_download_reads_its_own_body_from_the_start(
    mockserver: MockServer,
) -> None:
    # The first download ends (reset) half-way to the limit and is retried:
    # the retry is read up to the limit afresh, so the rule before it applies.
    body = HEAD + b"# padding\n" * 30_000 + b"Disallow: /middle\n" + b"# padding\n" * 40_000
    mockserver.set_robots("retried.test", Reply(body=body, reset=True), Reply(body=body))
    urls = [mockserver.url("retried.test", p) for p in ("/middle", "/other")]
    settings = {**SETTINGS, "RETRY_ENABLED": True, "RETRY_TIMES": 1}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    crawled, dropped = accounted(result, urls)
    assert (crawled, dropped) == ([urls[1]], [urls[0]])
    assert robots_fetches(mockserver, "retried.test") == 2
    assert stat(result, "truncated") == 1


@async_test
async def test_a_body_cut_in_a_coding_this_package_cannot_unpack_is_unreachable(
    mockserver: MockServer,
) -> None:
    # A server that ignores Accept-Encoding: a stream cut in a coding zlib does
    # not know cannot be unpacked as far as it is read (never "allow all").
    noise = random.Random(1).randbytes(100_000)
    mockserver.set_robots("br.test", Reply(body=noise, headers={"Content-Encoding": "br"}))
    urls = [mockserver.url("br.test", "/page")]
    settings = {**SETTINGS, "ROBOTRULES_MAX_SIZE": 1_000}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    _, dropped = accounted(result, urls)
    assert dropped == urls
    assert stat(result, "origins/unreachable") == 1
    assert result.messages("cannot unpack Content-Encoding 'br'", logging.WARNING)


# Redirects.


@async_test
async def test_a_redirect_to_a_non_http_scheme_counts_as_no_robots_txt(
    mockserver: MockServer,
) -> None:
    mockserver.set_robots("ftp.test", Reply(301, redirect_to="ftp://ftp.test/robots.txt"))
    urls = [mockserver.url("ftp.test", p) for p in ("/a", "/private")]
    result = await run_spider(RecordingSpider, SETTINGS, start_urls=urls)
    crawled, dropped = accounted(result, urls)
    assert (crawled, dropped) == (sorted(urls), [])
    assert stat(result, "request_count") == 1
    assert stat(result, "response_status_count/301") == 1
    entry = entry_of(result, urls[0])
    assert (entry.outcome, entry.status) == (Outcome.ALLOW_ALL, 301)
    assert result.messages("to a non-HTTP URL ftp://ftp.test/robots.txt", logging.DEBUG)
    assert result.messages("allow-all (HTTP 301)", logging.DEBUG)


# What a 200 may carry.


HTML = (
    b"<!DOCTYPE html>\n<html><head><title>Welcome</title></head>\n"
    b"<body><h1>Page not found</h1><p>Try <a href='/'>home</a>.</p></body></html>\n"
)
BINARY = bytes(range(256)) * 16
UTF16 = PRIVATE.decode().encode("utf-16")


@pytest.mark.parametrize(("body", "what"), [(HTML, "html"), (BINARY, "binary"), (UTF16, "utf-16")])
@async_test
async def test_a_200_that_is_no_robots_txt_allows_everything(
    mockserver: MockServer, body: bytes, what: str
) -> None:
    # No line is a rule: HTML, binary, and UTF-16 read as UTF-8 (docs/choices.rst).
    mockserver.set_robots("odd.test", Reply(body=body))
    urls = [mockserver.url("odd.test", p) for p in ("/", "/private")]
    result = await run_spider(RecordingSpider, SETTINGS, start_urls=urls)
    crawled, dropped = accounted(result, urls)
    assert (crawled, dropped) == (sorted(urls), [])
    assert stat(result, "response_status_count/200") == 1
    assert stat(result, "truncated") == 0
    entry = entry_of(result, urls[0])
    assert entry.outcome is Outcome.RULES
    assert entry.robots is not None
    assert entry.robots.unknown_lines > 0, what
    assert result.messages("rules (HTTP 200)", logging.DEBUG)


# Statuses not covered in test_middleware.py.


@async_test
async def test_410_means_everything_allowed(mockserver: MockServer) -> None:
    mockserver.set_robots("gone.test", Reply(410, b"Gone"))
    urls = [mockserver.url("gone.test", p) for p in ("/", "/private")]
    result = await run_spider(RecordingSpider, SETTINGS, start_urls=urls)
    crawled, dropped = accounted(result, urls)
    assert (crawled, dropped) == (sorted(urls), [])
    assert stat(result, "response_status_count/410") == 1
    assert stat(result, "origins/unreachable") == 0
    assert result.messages("allow-all (HTTP 410)", logging.DEBUG)


# Freshness.


@pytest.mark.parametrize(
    ("headers", "lifetime"),
    [
        # An unreadable Cache-Control directive is ignored: the default lifetime.
        ({"Cache-Control": "max-age=banana, public"}, 3_600.0),
        # An Expires that is not a date means already expired: the floor.
        ({"Expires": "the day after tomorrow"}, 60.0),
    ],
)
@async_test
async def test_invalid_freshness_headers_are_read_safely(
    mockserver: MockServer, headers: dict[str, str], lifetime: float
) -> None:
    mockserver.set_robots("odd.test", Reply(body=PRIVATE, headers=headers))
    urls = [mockserver.url("odd.test", p) for p in ("/a", "/private", "/b")]
    steps: list[Step] = [urls[0], urls[1], lifetime - 1, urls[2]]  # each once the rules are in
    settings = {**SETTINGS, "ROBOTRULES_MAX_AGE": 3_600}
    result = await run_spider(StepSpider, settings, steps=steps)
    crawled, dropped = accounted(result, urls)
    assert (crawled, dropped) == (sorted([urls[0], urls[2]]), [urls[1]])
    entry = entry_of(result, urls[0])
    assert entry.fresh_until - entry.fetched_at == pytest.approx(lifetime, abs=0.5)
    assert robots_fetches(mockserver, "odd.test") == 1
    assert (stat(result, "request_count"), stat(result, "refreshed")) == (1, 0)
    assert result.messages(f"fresh for {lifetime:.0f} s", logging.DEBUG)


@async_test
async def test_max_age_0_does_not_refetch_before_every_request(mockserver: MockServer) -> None:
    mockserver.set_robots("zero.test", Reply(body=PRIVATE, headers={"Cache-Control": "max-age=0"}))
    urls = [mockserver.url("zero.test", f"/{n}") for n in range(12)]
    urls.append(mockserver.url("zero.test", "/private"))
    steps: list[Step] = [*urls[:-1], 59.0, urls[-1]]  # each once the rules are in, then 59 s
    result = await run_spider(StepSpider, SETTINGS, steps=steps)  # ROBOTRULES_MAX_AGE: 24 h
    crawled, dropped = accounted(result, urls)
    assert (crawled, dropped) == (sorted(urls[:-1]), [urls[-1]])
    # The 60 s floor (ROBOTRULES_MIN_AGE): one fetch for all of them.
    assert robots_fetches(mockserver, "zero.test") == 1
    assert (stat(result, "request_count"), stat(result, "refreshed")) == (1, 0)
    entry = entry_of(result, urls[0])
    assert entry.fresh_until - entry.fetched_at == pytest.approx(60.0, abs=0.5)
    assert result.messages("fresh for 60 s", logging.DEBUG)


@async_test
async def test_a_robots_txt_that_changes_is_read_again_after_it_expires(
    mockserver: MockServer,
) -> None:
    old = Reply(body=b"User-agent: *\nDisallow: /old\n", headers={"Cache-Control": "max-age=1"})
    new = Reply(body=b"User-agent: *\nDisallow: /new\n", headers={"Cache-Control": "max-age=1"})
    mockserver.set_robots("moving.test", old, new)
    url = mockserver.url
    steps: list[Step] = [
        url("moving.test", "/new/1"),  # the old rules allow it
        1.5,
        url("moving.test", "/trigger"),  # stale: fetched again, old rules decide
        settled,
        url("moving.test", "/new/2"),  # the new rules forbid it
        url("moving.test", "/old/2"),  # ...and no longer forbid this
    ]
    settings = {**SETTINGS, "ROBOTRULES_MIN_AGE": 0}
    result = await run_spider(StepSpider, settings, steps=steps)
    urls = [u for u in steps if isinstance(u, str)]
    _, dropped = accounted(result, urls)
    assert dropped == [url("moving.test", "/new/2")]
    assert "Disallow: /new (line 2)" in str(result.failures[0][1])
    assert robots_fetches(mockserver, "moving.test") == 2
    assert (stat(result, "request_count"), stat(result, "refreshed")) == (2, 1)
    assert (stat(result, "allowed"), stat(result, "forbidden")) == (3, 1)
    assert result.messages("fresh for 1 s", logging.DEBUG)
    (logged,) = [
        m
        for m in result.messages("Forbidden by robots.txt", logging.DEBUG)
        if url("moving.test", "/new/2") in m
    ]
    assert "Disallow: /new (line 2)" in logged


# Network.


class _PlainAnswer(Protocol):
    """Answers whatever arrives, a TLS ClientHello included, with plain HTTP, and hangs up."""

    def dataReceived(self, data: bytes) -> None:
        transport: Any = self.transport  # zope interfaces are untyped for mypy
        transport.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        transport.loseConnection()


@pytest.mark.parametrize("server", ["mockserver", "plain-answer"])
@not_reactorless(TLS_ERRORS)
@async_test
async def test_a_tls_failure_is_unreachable(mockserver: MockServer, server: str) -> None:
    # https:// to a plain-HTTP port. The mock server waits for a request line
    # that never comes (the handshake times out); a server that answers at
    # once in plain text makes the handshake itself fail.
    listening = None
    port = mockserver.port
    if server == "plain-answer":
        listening = get_reactor().listenTCP(  # type: ignore[no-untyped-call]
            0, Factory.forProtocol(_PlainAnswer), interface="127.0.0.1"
        )
        port = listening.getHost().port
    try:
        urls = [f"https://tls.test:{port}/{n}" for n in range(2)]
        result = await run_spider(RecordingSpider, SETTINGS, start_urls=urls)
    finally:
        if listening is not None:
            await listening.stopListening()
    crawled, dropped = accounted(result, urls)
    assert (crawled, dropped) == ([], sorted(urls))
    for _, exc in result.failures:
        # A RobotsTxtUnreachable where the middleware drops it; its message either way.
        assert isinstance(exc, IgnoreRequest)
        assert str(exc).startswith("robots.txt unreachable: ")
    assert stat(result, "unreachable") == 2
    # The plain server fails the handshake at once; the mock server mostly lets
    # it time out, but was seen to close the connection first under load (what
    # its HTTP parser makes of the TLS hello's random bytes varies), one fetch
    # of robots.txt one way and its retry the other.
    names = ["DownloadFailedError"]
    if server == "mockserver":
        names.append("DownloadTimeoutError")
    expected = {f"robotrules/exception_count/{download_error(n).__name__}" for n in names}
    exceptions = [k for k in result.stats if k.startswith("robotrules/exception_count/")]
    assert exceptions
    assert set(exceptions) <= expected
    assert not [k for k in result.stats if k.startswith("robotrules/response_status_count/")]
    assert stat(result, "origins/unreachable") == 1
    assert result.messages(
        f"robots.txt unreachable: https://tls.test:{port}/robots.txt", logging.WARNING
    )
    assert result.messages("robots.txt unreachable: dropping 2 requests", logging.WARNING)
    # Nothing but robots.txt was asked of the server (no page got through).
    assert [r.path for r in mockserver.requests if r.path != "/robots.txt"] == []


@async_test
async def test_thousands_of_origins_at_once_some_slow(mockserver: MockServer) -> None:
    """2,000 origins, each its own robots.txt, 5% answering in 2 s, 1% never.

    The crawl finishes; the rules held and the per-origin state stay within
    ROBOTRULES_CACHE_SIZE however many origins pass; every request ends
    crawled or dropped with a reason, and the counts add up.
    """
    origins = 2000
    urls: list[str] = []
    for site in range(origins):
        host = f"o{site}.test"
        if site % 100 == 0:
            mockserver.set_robots(host, Reply(hang=True))
        elif site % 20 == 0:
            mockserver.set_robots(host, Reply(body=PRIVATE, delay=2.0))
        else:
            mockserver.set_robots(host, Reply(body=PRIVATE))
        urls += [mockserver.url(host, "/a"), mockserver.url(host, "/private/b")]
    cache_size = 300
    settings: dict[str, Any] = {
        **SETTINGS,
        "CONCURRENT_REQUESTS": 64,
        "DOWNLOAD_TIMEOUT": 3.0,
        "ROBOTRULES_CACHE_SIZE": cache_size,
        "ROBOTRULES_UNREACHABLE_TIMEOUT": 4.0,
        "LOG_LEVEL": "INFO",
    }
    result = await run_spider(RecordingSpider, settings, start_urls=urls, crawl_timeout=240)
    crawled, dropped = accounted(result, urls)
    dead = {
        mockserver.url(f"o{site}.test", path)
        for site in range(0, origins, 100)
        for path in ("/a", "/private/b")
    }
    assert sorted(crawled) == sorted(u for u in urls if u.endswith("/a") and u not in dead)
    assert sorted(dropped) == sorted(u for u in urls if u.endswith("/private/b") or u in dead)
    assert stat(result, "offered") == 2 * origins
    assert (
        stat(result, "allowed") + stat(result, "forbidden") + stat(result, "unreachable")
        == 2 * origins
    )
    assert stat(result, "unreachable") == 2 * (origins // 100)
    # Memory stays bounded: rules and per-origin state by the cache size.
    manager = RobotsManager.for_crawler(result.crawler)
    assert stat(result, "origins") <= cache_size
    assert len(manager.db) <= cache_size
    assert len(manager.origins) <= cache_size
    assert stat(result, "evicted") >= origins - cache_size
    assert not manager.parking.pending()
