"""Real crawls without a Twisted reactor (``TWISTED_REACTOR_ENABLED = False``).

Scrapy refuses such a crawl in a process with a reactor installed, as this
test process has (pytest-twisted's), so each crawl runs in its own process:
``tests/helpers/reactorless_crawl.py``, with its sites served by aiohttp on
127.0.0.1 and ``twisted.internet.reactor`` forbidden, as under ``scrapy
crawl``. Every part of the package takes its turn: decisions, parking,
unreachable robots.txt, Crawl-delay, the audit trail, the page-level and
usage middlewares, the SQLite and Redis stores, sitemaps, shadow mode and
the stats identity. Each crawl must leave no ERROR and no reactor imported.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
import scrapy

from tests.helpers import REPO_ROOT as ROOT
from tests.helpers.redisserver import RedisServer

SCRAPY_VERSION = tuple(int(part) for part in scrapy.__version__.split(".")[:2])

pytestmark = [
    pytest.mark.reactorless,
    pytest.mark.skipif(
        SCRAPY_VERSION < (2, 19) or find_spec("aiohttp") is None,
        reason=f"Scrapy {scrapy.__version__} cannot download without a Twisted reactor"
        " (TWISTED_REACTOR_ENABLED = False downloads with aiohttp from Scrapy 2.19 on)",
    ),
]

SCRIPT = "tests.helpers.reactorless_crawl"
CRAWL_TIMEOUT = 120.0
"""Seconds a crawl process may take before the test fails rather than hang."""

OURS: dict[str, Any] = {
    "ADDONS": {"scrapy_robotrules.Addon": 0},
    "ROBOTSTXT_OBEY": True,
    "RETRY_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 5.0,
    "ROBOTRULES_RETRY_DELAY": 0.2,
    "ROBOTRULES_UNREACHABLE_TIMEOUT": 0.5,
    "USER_AGENT": "ExampleBot/1.0 (+https://example.test/bot)",
}
PRIVATE = "User-agent: *\nAllow: /private/open\nDisallow: /private\n"
HTML = {"Content-Type": "text/html; charset=utf-8"}
SITES: dict[str, Any] = {
    "a": {"robots": {"body": PRIVATE}},
    "down": {"robots": {"status": 503, "body": "busy"}},
}
STARTS = ["{a}/public", "{a}/private/1", "{a}/private/open", "{down}/page"]


def _run_python(*args: str) -> None:
    """Run Python with ``args`` in a process of its own, from the repository root."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CRAWL_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-5000:]


def crawl(tmp_path: Path, job: dict[str, Any], name: str = "crawl") -> dict[str, Any]:
    """Run one crawl in its own process; what it did (see ``reactorless_crawl.py``)."""
    job_file, result_file = tmp_path / f"{name}.job.json", tmp_path / f"{name}.result.json"
    job_file.write_text(json.dumps(job), "utf-8")
    _run_python("-m", SCRIPT, str(job_file), str(result_file))
    result: dict[str, Any] = json.loads(result_file.read_text("utf-8"))
    errors = [line for line in result["log"] if line[0] in ("ERROR", "CRITICAL")]
    assert not errors, errors
    assert not result["reactor_imported"]
    assert result["stats"]["finish_reason"] == "finished"
    return result


def stat(result: dict[str, Any], key: str) -> Any:
    return result["stats"].get(f"robotrules/{key}", 0)


def identity_holds(result: dict[str, Any]) -> bool:
    """The stats identity (docs/reference/stats.rst): every offered request ended one way."""
    ended = ("allowed", "forbidden", "unreachable", "unchecked", "lost_at_close", "saved_at_close")
    return bool(stat(result, "offered") == sum(stat(result, key) for key in ended))


def url(result: dict[str, Any], site: str, path: str) -> str:
    return f"{result['sites'][site]}{path}"


def requested(result: dict[str, Any], site: str, path: str | None = None) -> list[str]:
    return [p for s, p, _ in result["requests"] if s == site and (path is None or p == path)]


def test_decisions_unreachable_robots_txt_and_the_whole_audit_trail(tmp_path: Path) -> None:
    trail = tmp_path / "audit.jsonl"
    result = crawl(
        tmp_path,
        {"sites": SITES, "start": STARTS, "settings": {**OURS, "ROBOTRULES_AUDIT": str(trail)}},
    )
    crawled = {url(result, "a", "/private/open"), url(result, "a", "/public")}
    assert set(result["crawled"]) == crawled
    assert {tuple(failure) for failure in result["failures"]} == {
        (url(result, "a", "/private/1"), "RobotsTxtForbidden"),
        (url(result, "down", "/page"), "RobotsTxtUnreachable"),
    }
    assert (stat(result, "allowed"), stat(result, "forbidden"), stat(result, "unreachable")) == (
        2,
        1,
        1,
    )
    assert identity_holds(result)
    assert len(requested(result, "a", "/robots.txt")) == 1
    assert len(requested(result, "down", "/robots.txt")) >= 2  # tried again before giving up
    lines = [json.loads(line) for line in trail.read_text("ascii").splitlines()]
    requests = [line for line in lines if line["event"] == "request"]
    fetches = [line for line in lines if line["event"] == "fetch"]
    assert len(requests) == len(STARTS)
    assert len(fetches) == len(requested(result, "a", "/robots.txt")) + len(
        requested(result, "down", "/robots.txt")
    )
    assert stat(result, "audit/lines") == len(lines)
    assert stat(result, "audit/lost") == 0
    by_url = {line["url"]: line for line in requests}
    assert by_url[url(result, "a", "/private/1")]["rule"] == "Disallow: /private"
    assert by_url[url(result, "down", "/page")]["decision"] == "unreachable"


def test_requests_wait_parked_while_robots_txt_is_fetched(tmp_path: Path) -> None:
    # slow's robots.txt is answered only once its three requests are parked.
    sites = {"slow": {"robots": {"body": PRIVATE, "hold_until_parked": 3}}}
    starts = ["{slow}/one", "{slow}/two", "{slow}/private/x"]
    result = crawl(tmp_path, {"sites": sites, "start": starts, "settings": OURS})
    assert stat(result, "parked") >= 3
    assert set(result["crawled"]) == {url(result, "slow", "/one"), url(result, "slow", "/two")}
    assert stat(result, "forbidden") == 1
    assert len(requested(result, "slow", "/robots.txt")) == 1
    assert identity_holds(result)


def test_a_robots_txt_larger_than_every_limit_is_read_up_to_max_size(tmp_path: Path) -> None:
    # Scrapy's reactorless download handler stops the download as its Twisted one
    # does: a 10 MB file announced by its Content-Length, over DOWNLOAD_MAXSIZE.
    head = "User-agent: *\nDisallow: /early\n" + "# padding\n" * 60_000
    body = head + "Disallow: /late\n" + "# padding\n" * 940_000
    sites = {"huge": {"robots": {"body": body}}}
    starts = ["{huge}/early", "{huge}/late"]
    settings = {**OURS, "DOWNLOAD_MAXSIZE": 1_000_000}
    result = crawl(tmp_path, {"sites": sites, "start": starts, "settings": settings})
    assert result["crawled"] == [url(result, "huge", "/late")]
    assert [tuple(failure) for failure in result["failures"]] == [
        (url(result, "huge", "/early"), "RobotsTxtForbidden")
    ]
    assert stat(result, "truncated") == 1
    assert stat(result, "origins/unreachable") == 0
    [line] = [line for level, _, line in result["log"] if "ROBOTRULES_MAX_SIZE" in line]
    assert f"({len(body)} > 512000 bytes)" in line
    assert identity_holds(result)


def test_crawl_delay_spaces_the_pages(tmp_path: Path) -> None:
    delay = 0.6
    sites = {"slow": {"robots": {"body": f"User-agent: *\nCrawl-delay: {delay}\n"}}}
    starts = [f"{{slow}}/{n}" for n in range(3)]
    result = crawl(tmp_path, {"sites": sites, "start": starts, "settings": OURS})
    assert len(result["crawled"]) == 3
    assert stat(result, "crawl_delay/applied") >= 1
    times = [t for site, path, t in result["requests"] if site == "slow" and path != "/robots.txt"]
    # Without the delay the pages come milliseconds apart; half the delay is a loose floor.
    assert all(later - earlier >= delay / 2 for earlier, later in itertools.pairwise(times))


def html(meta: str = "") -> str:
    return f"<html><head>{meta}</head><body>x</body></html>"


def test_page_level_directives_and_usage_preferences(tmp_path: Path) -> None:
    robots = (
        "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n"
    )
    pages = {
        "/plain": {"body": html()},
        "/noindex": {"body": html('<meta name="robots" content="noindex">')},
        "/header-noindex": {"body": html(), "headers": {"X-Robots-Tag": "noindex"}},
        "/ai-ok/x": {"body": html()},
        "/ai-ok/refused": {"body": html(), "headers": {"Content-Usage": "train-ai=n"}},
    }
    sites = {"site": {"robots": {"body": robots}, "pages": pages}}
    settings = {**OURS, "ROBOTRULES_PURPOSES": ["train-ai"]}
    result = crawl(
        tmp_path, {"sites": sites, "start": [f"{{site}}{p}" for p in pages], "settings": settings}
    )
    # robots.txt refuses train-ai outside /ai-ok/: never downloaded.
    assert not requested(result, "site", "/plain")
    assert stat(result, "usage/forbidden") == 3
    # noindex drops a page's items (its meta tag or its header); a refusal marks them.
    marks = {item["url"]: item.get("robotrules_usage_refused") for item in result["items"]}
    assert set(marks) == {url(result, "site", "/ai-ok/x"), url(result, "site", "/ai-ok/refused")}
    assert marks[url(result, "site", "/ai-ok/x")] is None
    assert marks[url(result, "site", "/ai-ok/refused")].startswith("train-ai: disallowed")
    assert identity_holds(result)


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite://{tmp_path}/robots.db"
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        yield server.url


def test_a_store_keeps_robots_txt_for_the_next_crawl(tmp_path: Path, store_url: str) -> None:
    settings = {**OURS, "ROBOTRULES_STORE": store_url}
    starts = ["{a}/one", "{a}/private/1"]
    job = {"sites": {"a": {"robots": {"body": PRIVATE}}}, "start": starts, "settings": settings}
    result = crawl(tmp_path, {**job, "repeat": 2})
    first, again = result["runs"]
    # One robots.txt fetch for both crawls: the second read the file from the store.
    assert len(requested(result, "a", "/robots.txt")) == 1
    for run in (first, again):
        assert stat(run, "store/errors") == 0
        assert (stat(run, "allowed"), stat(run, "forbidden")) == (1, 1)
        assert identity_holds(run)
    assert stat(again, "store/hits") >= 1


def test_sitemaps_are_followed(tmp_path: Path) -> None:
    sitemap = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>{a}/page</loc></url><url><loc>{a}/private/page</loc></url></urlset>"
    )
    robots = PRIVATE + "Sitemap: {a}/sitemap.xml\n"
    pages = {"/sitemap.xml": {"body": sitemap, "headers": {"Content-Type": "application/xml"}}}
    sites = {"a": {"robots": {"body": robots}, "pages": pages}}
    settings = {**OURS, "ROBOTRULES_FOLLOW_SITEMAPS": True}
    result = crawl(tmp_path, {"sites": sites, "start": ["{a}/"], "settings": settings})
    assert url(result, "a", "/page") in result["crawled"]
    assert url(result, "a", "/private/page") not in result["crawled"]
    assert stat(result, "sitemaps/scheduled") == 1
    assert len(requested(result, "a", "/sitemap.xml")) == 1
    assert identity_holds(result)


def test_shadow_mode_lets_through_and_counts(tmp_path: Path) -> None:
    trail = tmp_path / "audit.jsonl"
    settings = {**OURS, "ROBOTRULES_MODE": "shadow", "ROBOTRULES_AUDIT": f"file://{trail}"}
    result = crawl(tmp_path, {"sites": SITES, "start": STARTS, "settings": settings})
    assert len(result["crawled"]) == len(STARTS)
    assert stat(result, "shadow/would_forbid") == 1
    assert stat(result, "shadow/would_hold") == 1
    lines = [json.loads(line) for line in trail.read_text("ascii").splitlines()]
    shadowed = sorted(line["decision"] for line in lines if line.get("shadow"))
    assert shadowed == ["forbidden", "unreachable"]
    assert stat(result, "audit/lines") == len(lines)
    assert identity_holds(result)


def test_no_module_of_the_package_imports_the_reactor() -> None:
    # Every module imported with the reactor's import forbidden, as in a crawl without one.
    code = (
        "import pkgutil, sys, importlib, scrapy_robotrules\n"
        "from scrapy.utils.reactorless import install_reactor_import_hook\n"
        "install_reactor_import_hook()\n"
        "for module in pkgutil.walk_packages(scrapy_robotrules.__path__, 'scrapy_robotrules.'):\n"
        "    if not module.name.endswith('__main__'): importlib.import_module(module.name)\n"
        "assert 'twisted.internet.reactor' not in sys.modules\n"
    )
    _run_python("-c", code)
