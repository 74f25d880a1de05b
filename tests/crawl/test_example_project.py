"""The example project: ``scrapy crawl demo`` against its local site, run as a user runs it.

Each crawl is a child process started in ``example_project/``, with the
repository on ``PYTHONPATH`` so ``scrapy_robotrules`` imports without being
installed. The log is all these tests read: the spider's ``crawled`` and
``not crawled`` lines, the local site's robots.txt lines and the stats Scrapy
dumps at close.
"""

from __future__ import annotations

import re
import subprocess
from importlib.util import find_spec

import pytest
import scrapy

from tests.helpers.demo import PROJECT, Crawl, run_demo

CRAWL_TESTS = True
"""Real crawls: run on the oldest supported Scrapy too (see conftest.py)."""


TIMEOUT = 60.0
"""Seconds before a crawl counts as hung (the demo takes well under 15)."""

DEFAULT = "default"
FIRST_MATCH = "first-match"

# Every page of the local site but the forbidden ones, as "<host><path>".
ALLOWED = {
    "shop/",
    "shop/products",
    "shop/products/1.html",
    "shop/products/2.html",
    "shop/about.html",
    "blog/",
    "blog/posts/hello.html",
    "blog/posts/robots.html",
    "flaky/",
    "flaky/status.html",
}
FORBIDDEN = {
    "shop/private/orders.html",
    "shop/cgi-bin/search?q=robots",
    "shop/products?sessionid=42",
    "blog/drafts/next.html",
    "flaky/admin/",
}
PRESS_KIT = "shop/private/press-kit.html"
"""Under ``Disallow: /private/`` and its own ``Allow``: the precedence mode decides."""


@pytest.fixture(scope="module")
def crawls() -> dict[str, Crawl]:
    """The demo with the default settings and with ``-a precedence=first-match``, run together."""
    running = {DEFAULT: run_demo(), FIRST_MATCH: run_demo("-a", f"precedence={FIRST_MATCH}")}
    done = {}
    for mode, process in running.items():
        try:
            log, _ = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            log, _ = process.communicate()
            pytest.fail(f"scrapy crawl demo ({mode}) still running after {TIMEOUT} s:\n{log}")
        done[mode] = Crawl(process.returncode, log)
    return done


@pytest.mark.parametrize("mode", [DEFAULT, FIRST_MATCH])
def test_crawl_finishes_cleanly(crawls: dict[str, Crawl], mode: str) -> None:
    crawl = crawls[mode]
    assert crawl.returncode == 0, crawl.log
    assert "Spider closed (finished)" in crawl.log, crawl.log
    assert "Traceback" not in crawl.log, crawl.log
    # The one ERROR is Scrapy's RetryMiddleware giving up on the flaky
    # origin's robots.txt (its retries apply to robots.txt like any request);
    # scrapy-robotrules then holds that origin's pages and fetches again.
    errors = [line for line in crawl.log.splitlines() if "] ERROR:" in line]
    assert all("Gave up retrying" in e and "flaky" in e and "/robots.txt" in e for e in errors), (
        "\n".join(errors)
    )
    assert crawl.stats.get("log_count/ERROR", 0) == len(errors) <= 1, crawl.log
    assert "[scrapy_robotrules.crawl.extension] INFO:" in crawl.log, "no summary from the extension"


@pytest.mark.parametrize("mode", [DEFAULT, FIRST_MATCH])
def test_disallowed_pages_are_forbidden(crawls: dict[str, Crawl], mode: str) -> None:
    crawl = crawls[mode]
    assert crawl.stats.get("robotrules/forbidden", 0) > 0, crawl.log
    assert crawl.pages("crawled") - {PRESS_KIT} == ALLOWED, crawl.log
    assert crawl.pages("not crawled") - {PRESS_KIT} == FORBIDDEN, crawl.log


def test_press_kit_allowed_by_most_specific_forbidden_by_first_match(
    crawls: dict[str, Crawl],
) -> None:
    default, first_match = crawls[DEFAULT], crawls[FIRST_MATCH]
    assert PRESS_KIT in default.pages("crawled"), default.log
    assert PRESS_KIT not in default.pages("not crawled"), default.log
    assert PRESS_KIT in first_match.pages("not crawled"), first_match.log
    assert PRESS_KIT not in first_match.pages("crawled"), first_match.log
    # Every link to the press kit is one more forbidden request (a request is
    # decided each time it is offered, duplicates included).
    assert first_match.stats["robotrules/forbidden"] > default.stats["robotrules/forbidden"]


_CLOSING = re.compile(
    r"\[demo\] INFO: (\d+) pages crawled; (\d+) pages not crawled, in (\d+) requests"
    r" \([^)]*\): (.*)$",
    re.MULTILINE,
)
_SUMMARY = re.compile(
    r"robots\.txt: files kept for \d+ origins?, \d+ fetch(?:es)? \(\d+ requests?\),"
    r" (\d+) requests? forbidden"
)


@pytest.mark.parametrize("mode", [DEFAULT, FIRST_MATCH])
def test_the_closing_numbers_agree_with_the_lines_above(
    crawls: dict[str, Crawl], mode: str
) -> None:
    """Pages are counted once; requests forbidden count a page linked twice twice."""
    crawl = crawls[mode]
    closing, summary = _CLOSING.search(crawl.log), _SUMMARY.search(crawl.log)
    assert closing is not None, crawl.log
    assert summary is not None, crawl.log
    crawled, not_crawled, requests, listed = closing.groups()
    assert int(crawled) == len(crawl.pages("crawled")), crawl.log
    assert int(not_crawled) == len(crawl.pages("not crawled")), crawl.log
    # The spider's requests, the extension's summary and the stat: one number.
    assert int(requests) == int(summary[1]) == crawl.stats["robotrules/forbidden"], crawl.log
    # The difference is the pages requested again, each named with its count.
    again = [int(times) - 1 for times in re.findall(r"\((\d+) requests\)", listed)]
    assert int(requests) == int(not_crawled) + sum(again), crawl.log
    assert len(listed.split()) - 2 * len(again) == int(not_crawled), listed


def test_origin_recovers_from_503(crawls: dict[str, Crawl]) -> None:
    crawl = crawls[DEFAULT]
    robots = re.findall(r"robots\.txt of http://flaky\.localhost:\d+ answered (\d+)", crawl.log)
    # Three 503s: Scrapy's RetryMiddleware tries twice more, then the 503 reaches
    # scrapy-robotrules, which holds the origin's requests and fetches robots.txt
    # again after ROBOTRULES_RETRY_DELAY.
    assert robots[:4] == ["503", "503", "503", "200"], crawl.log
    assert crawl.stats.get("robotrules/response_status_count/503", 0) >= 1, crawl.log
    assert {"flaky/", "flaky/status.html"} <= crawl.pages("crawled"), crawl.log


def test_crawl_delay_applied(crawls: dict[str, Crawl]) -> None:
    crawl = crawls[DEFAULT]
    assert "robotrules/crawl_delay/applied" in crawl.stats, crawl.log


def test_the_readme_quotes_the_flaky_sites_log_lines(crawls: dict[str, Crawl]) -> None:
    """What example_project/README.rst says the log shows for the flaky site, it shows."""
    readme = (PROJECT / "README.rst").read_text()
    paragraph = readme.split("``http://flaky.localhost:PORT``", 1)[1].split("\n\n", 1)[0]
    quoted = [" ".join(q.split()) for q in re.findall(r"``(.+?)``", paragraph, re.DOTALL)]
    lines = [q for q in quoted if " " in q]  # log fragments, not names of settings or paths
    assert len(lines) >= 4, quoted
    log = re.sub(r"localhost:\d+", "localhost:PORT", crawls[DEFAULT].log)
    for line in lines:
        assert line in log, line


SCRAPY_VERSION = tuple(int(part) for part in scrapy.__version__.split(".")[:2])


@pytest.mark.skipif(
    SCRAPY_VERSION < (2, 19) or find_spec("aiohttp") is None,
    reason=f"Scrapy {scrapy.__version__} cannot download without a Twisted reactor"
    " (TWISTED_REACTOR_ENABLED = False downloads with aiohttp from Scrapy 2.19 on)",
)
def test_the_demo_runs_without_a_reactor() -> None:
    process = run_demo("-s", "TWISTED_REACTOR_ENABLED=False")
    try:
        log, _ = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        log, _ = process.communicate()
        pytest.fail(f"scrapy crawl demo without a reactor still running after {TIMEOUT} s:\n{log}")
    crawl = Crawl(process.returncode, log)
    assert crawl.returncode == 0, crawl.log
    assert "Spider closed (finished)" in crawl.log, crawl.log
    assert [line for line in crawl.log.splitlines() if "] ERROR:" in line] == [], crawl.log
    assert "Traceback" not in crawl.log, crawl.log
    assert crawl.pages("crawled") == {*ALLOWED, PRESS_KIT}, crawl.log
    assert crawl.pages("not crawled") == FORBIDDEN, crawl.log
    stats = crawl.stats
    assert stats["robotrules/forbidden"] == 6, crawl.log
    assert stats["robotrules/origins"] == 3, crawl.log
    assert stats["robotrules/origins/unreachable"] == 1, crawl.log
    assert "robotrules/unreachable" not in stats, crawl.log
