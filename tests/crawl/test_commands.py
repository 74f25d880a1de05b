"""Scrapy's own commands with the add-on: ``shell``, ``fetch``, ``parse``, ``check``, ``bench``.

Each command runs as a user runs it: a child process in a small project
(written to a temporary directory) whose settings enable the add-on, against
the ``MockServer`` of the test (two origins: ``127.0.0.1`` and ``localhost``,
both served by it) while the test's reactor goes on serving. A command that
hangs fails its test after ``TIMEOUT`` seconds.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT
from tests.helpers.crawling import async_test, in_thread, reactorless
from tests.helpers.demo import Crawl
from tests.helpers.mockserver import MockServer, Reply, get_reactor

CRAWL_TESTS = True


TIMEOUT = 60.0
"""Seconds before a command counts as hung (each takes a few)."""

ROBOTS = b"User-agent: *\nDisallow: /private\n"
HOSTS = ("127.0.0.1", "localhost")
"""Two origins on the one server: every name resolves to 127.0.0.1 without help."""

SPIDERS = '''
from scrapy import Spider


class PagesSpider(Spider):
    name = "pages"

    def parse(self, response):
        """A page of the site gives its heading.

        @url {allowed}
        @returns items 1 1
        @scrapes title
        """
        yield {{"title": response.css("h1::text").get()}}


class PrivateSpider(Spider):
    name = "private"

    def parse(self, response):
        """A page robots.txt forbids: the contract cannot be checked.

        @url {forbidden}
        @returns items 1 1
        """
        yield {{"title": response.css("h1::text").get()}}
'''


def reactor_setting() -> str:
    """The test's mode, for the child: its reactor, or none (the crawl tests run in each)."""
    if reactorless():
        return "TWISTED_REACTOR_ENABLED = False\n"
    reactor = type(get_reactor())
    return f"TWISTED_REACTOR = {f'{reactor.__module__}.{reactor.__qualname__}'!r}\n"


def make_project(directory: Path, mockserver: MockServer | None) -> Path:
    """A Scrapy project with the add-on on and two spiders whose contracts use ``mockserver``."""
    package = directory / "cmdproject"
    (package / "spiders").mkdir(parents=True)
    (directory / "scrapy.cfg").write_text("[settings]\ndefault = cmdproject.settings\n")
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(
        "BOT_NAME = 'cmdproject'\n"
        "SPIDER_MODULES = ['cmdproject.spiders']\n"
        "ROBOTSTXT_OBEY = True\n"
        "ADDONS = {'scrapy_robotrules.Addon': 0}\n"
        "TELNETCONSOLE_ENABLED = False\n"
        "HTTPPROXY_ENABLED = False\n"
        "LOG_LEVEL = 'DEBUG'\n" + reactor_setting()
    )
    base = mockserver.url(HOSTS[0], "") if mockserver is not None else "http://127.0.0.1:9"
    (package / "spiders" / "__init__.py").write_text(
        SPIDERS.format(allowed=f"{base}/page", forbidden=f"{base}/private")
    )
    if mockserver is not None:
        for host in HOSTS:
            mockserver.set_robots(host, Reply(body=ROBOTS))
    return directory


def run_scrapy(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``scrapy <arguments>`` in ``project``; fails the test if still running after TIMEOUT."""
    env = dict(os.environ)
    for name in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT", "SCRAPY_PYTHON_SHELL"):
        env.pop(name, None)  # the project's scrapy.cfg decides
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "scrapy", *arguments]
    try:
        return subprocess.run(
            command,
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        log = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr
        pytest.fail(f"scrapy {' '.join(arguments)} still running after {TIMEOUT} s:\n{log}")


async def scrapy(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``run_scrapy`` in a thread, so the test's reactor (or loop) serves the child meanwhile."""
    return await in_thread(run_scrapy, project, *arguments)


def forbidden_line(url: str) -> str:
    """What the log says of ``url``, dropped by ``Disallow: /private``."""
    return f"Forbidden by robots.txt: <GET {url}> disallowed by Disallow: /private (line 2)"


def statuses(*urls: str) -> str:
    """Shell code (``-c``, one expression) fetching each URL: the response status, or None.

    The first item is the status of the response the shell started with.
    """
    steps = ["getattr(response, 'status', None)"]
    steps += [f"(fetch({url!r}), getattr(response, 'status', None))[1]" for url in urls]
    return f"({', '.join(steps)},)"


@async_test
async def test_shell_fetch_of_a_url_forbidden_by_known_rules_comes_back_without_response(
    mockserver: MockServer, tmp_path: Path
) -> None:
    # The shell starts with an allowed page, so the origin's rules are known
    # when fetch() asks for the forbidden one (the case that hung).
    project = make_project(tmp_path, mockserver)
    page, private = mockserver.url(HOSTS[0], "/page"), mockserver.url(HOSTS[0], "/private")
    other = mockserver.url(HOSTS[0], "/other")
    result = await scrapy(project, "shell", page, "-c", statuses(private, other))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "(200, None, 200)", result.stdout + result.stderr
    assert forbidden_line(private) in result.stderr
    assert mockserver.requests_for(HOSTS[0], "/private") == []
    assert len(mockserver.requests_for(HOSTS[0], "/robots.txt")) == 1


@async_test
async def test_shell_fetch_while_robots_txt_is_unknown_completes_either_way(
    mockserver: MockServer, tmp_path: Path
) -> None:
    # Every fetch here is the first of its origin: it waits (parked) for
    # robots.txt, then comes back with no response (forbidden) or the page.
    # The last fetch is forbidden by rules known by then.
    project = make_project(tmp_path, mockserver)
    first, second = (mockserver.url(host, "/private") for host in HOSTS)
    page = mockserver.url(HOSTS[1], "/page")
    result = await scrapy(project, "shell", first, "-c", statuses(page, second))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "(None, 200, None)", result.stdout + result.stderr
    assert forbidden_line(first) in result.stderr
    assert forbidden_line(second) in result.stderr
    for host in HOSTS:
        assert mockserver.requests_for(host, "/private") == []
        assert len(mockserver.requests_for(host, "/robots.txt")) == 1


@async_test
async def test_fetch_prints_an_allowed_page_and_nothing_for_a_forbidden_one(
    mockserver: MockServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, mockserver)
    page, private = mockserver.url(HOSTS[0], "/page"), mockserver.url(HOSTS[0], "/private")
    allowed = await scrapy(project, "fetch", page)
    assert allowed.returncode == 0, allowed.stderr
    assert "<h1>127.0.0.1/page</h1>" in allowed.stdout, allowed.stdout + allowed.stderr
    forbidden = await scrapy(project, "fetch", private)
    assert forbidden.returncode == 0, forbidden.stderr
    assert forbidden.stdout == "", forbidden.stdout
    assert forbidden_line(private) in forbidden.stderr
    assert "Spider closed (finished)" in forbidden.stderr
    assert Crawl(0, forbidden.stderr).stats.get("robotrules/forbidden") == 1, forbidden.stderr
    assert mockserver.requests_for(HOSTS[0], "/private") == []


@async_test
async def test_parse_scrapes_an_allowed_page_and_nothing_from_a_forbidden_one(
    mockserver: MockServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, mockserver)
    page, private = mockserver.url(HOSTS[0], "/page"), mockserver.url(HOSTS[0], "/private")
    allowed = await scrapy(project, "parse", "--spider", "pages", "-c", "parse", page)
    assert allowed.returncode == 0, allowed.stderr
    assert "STATUS DEPTH LEVEL 1" in allowed.stdout, allowed.stdout + allowed.stderr
    assert "[{'title': '127.0.0.1/page'}]" in allowed.stdout, allowed.stdout + allowed.stderr
    forbidden = await scrapy(project, "parse", "--spider", "pages", "-c", "parse", private)
    assert forbidden.returncode == 0, forbidden.stderr
    assert "STATUS DEPTH LEVEL 0" in forbidden.stdout, forbidden.stdout
    assert "title" not in forbidden.stdout, forbidden.stdout
    assert forbidden_line(private) in forbidden.stderr
    assert f"No response downloaded for: {private}" in forbidden.stderr
    assert mockserver.requests_for(HOSTS[0], "/private") == []


@async_test
async def test_check_passes_an_allowed_contract_and_fails_a_forbidden_one(
    mockserver: MockServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, mockserver)
    allowed = await scrapy(project, "check", "pages")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "Ran 2 contracts" in allowed.stderr, allowed.stderr
    assert "\nOK" in allowed.stderr, allowed.stderr
    # As with Scrapy's own middleware: the contract's request is dropped
    # with IgnoreRequest, which its errback reports as an error.
    forbidden = await scrapy(project, "check", "private")
    assert forbidden.returncode == 1, forbidden.stdout + forbidden.stderr
    assert "FAILED (errors=1)" in forbidden.stderr, forbidden.stderr
    assert "[private] parse (errback)" in forbidden.stderr, forbidden.stderr
    assert "RobotsTxtForbidden: Forbidden by robots.txt" in forbidden.stderr, forbidden.stderr
    assert mockserver.requests_for(HOSTS[0], "/private") == []


@contextmanager
def _bench_server_port() -> Iterator[None]:
    """Held while ``scrapy bench`` runs: its server listens on a fixed port (8998), which a
    second test run on this machine at the same time could not listen on too."""
    with (Path(tempfile.gettempdir()) / "scrapy-robotrules-bench-8998.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        yield


def test_bench_crawls_with_the_add_on(tmp_path: Path) -> None:
    # bench runs its own local server (every path, /robots.txt too, is an
    # HTML page of links: no rules, everything allowed) and stops after
    # CLOSESPIDER_TIMEOUT seconds.
    project = make_project(tmp_path, None)
    with _bench_server_port():
        result = run_scrapy(project, "bench", "-s", "CLOSESPIDER_TIMEOUT=2", "-s", "LOG_LEVEL=INFO")
    assert result.returncode == 0, result.stderr
    assert "Spider closed (closespider_timeout)" in result.stderr, result.stderr
    stats = Crawl(0, result.stderr).stats
    assert stats.get("robotrules/request_count") == 1, result.stderr
    assert stats.get("robotrules/allowed", 0) >= 10, result.stderr
    assert stats.get("response_received_count", 0) >= 10, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
