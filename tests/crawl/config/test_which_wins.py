"""Which of a spider attribute, ``custom_settings`` and ``-s`` wins, in real ``scrapy crawl`` runs.

Scrapy's order: the command line (``-s``), then the spider's
``custom_settings``, then the project's settings. A ``robotrules_*``
attribute is the spider's word: it beats ``custom_settings`` and the
project, and yields to ``-s`` (docs/guides/scrapy.rst, "Which setting wins").
Each agent's group forbids its own path, so the forbidden path names the
agent asked about; ``/probe/page`` is forbidden under ``first-match`` only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.crawling import async_test, mockserver_fixture  # noqa: F401
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.projects import crawl_in, demo_project

CRAWL_TESTS = True

HOST = "127.0.0.1"
AGENTS = ("attrbot", "custombot", "cmdbot", "projbot")
ROBOTS = "".join(
    f"User-agent: {agent}\nDisallow: /{agent}\nDisallow: /probe\nAllow: /probe/page\n\n"
    for agent in AGENTS
).encode()
PATHS = (*(f"/{agent}" for agent in AGENTS), "/probe/page")
Case = tuple[dict[str, Any], dict[str, Any], list[str], Any]
"""``custom_settings``, spider attributes, command-line options, what is expected."""
_FORBIDDEN = re.compile(r"Forbidden by robots\.txt: <GET http://[^/]+(/\S*)>")


async def _forbidden(
    mockserver: MockServer,
    tmp_path: Path,
    *,
    custom: dict[str, Any],
    attributes: dict[str, Any],
    options: list[str],
) -> set[str]:
    mockserver.set_robots(HOST, Reply(body=ROBOTS))
    demo_project(
        tmp_path,
        custom,
        attributes=attributes,
        start_urls=tuple(mockserver.url(HOST, path) for path in PATHS),
        settings={"ROBOTRULES_USER_AGENT": "projbot", "HTTPPROXY_ENABLED": False},
    )
    command = [sys.executable, "-m", "scrapy.cmdline", "crawl", "demo", *options]
    done = await crawl_in(tmp_path, command)
    assert done.returncode == 0, done.stderr
    assert "ERROR" not in done.stderr, done.stderr
    return set(_FORBIDDEN.findall(done.stderr))


AGENT_CASES = [
    pytest.param(({}, {}, [], "/projbot"), id="project"),
    pytest.param(({"ROBOTRULES_USER_AGENT": "custombot"}, {}, [], "/custombot"), id="custom"),
    pytest.param(
        (
            {"ROBOTRULES_USER_AGENT": "custombot"},
            {"robotrules_user_agent": "attrbot"},
            [],
            "/attrbot",
        ),
        id="attribute-over-custom",
    ),
    pytest.param(
        (
            {},
            {"robotrules_user_agent": "attrbot"},
            ["-s", "ROBOTRULES_USER_AGENT=cmdbot"],
            "/cmdbot",
        ),
        id="cmdline-over-attribute",
    ),
    pytest.param(
        (
            {"ROBOTRULES_USER_AGENT": "custombot"},
            {},
            ["-s", "ROBOTRULES_USER_AGENT=cmdbot"],
            "/cmdbot",
        ),
        id="cmdline-over-custom",
    ),
]


@pytest.mark.parametrize("case", AGENT_CASES)
@async_test
async def test_which_agent_wins(mockserver: MockServer, tmp_path: Path, case: Case) -> None:
    custom, attributes, options, forbidden = case
    got = await _forbidden(
        mockserver, tmp_path, custom=custom, attributes=attributes, options=options
    )
    assert got == {forbidden}


FIRST = "first-match"
PRECEDENCE_CASES = [
    pytest.param(({"ROBOTRULES_PRECEDENCE": FIRST}, {}, [], True), id="custom"),
    pytest.param(({}, {"robotrules_precedence": FIRST}, [], True), id="attribute"),
    pytest.param(
        ({"ROBOTRULES_PRECEDENCE": FIRST}, {"robotrules_precedence": "most-specific"}, [], False),
        id="attribute-over-custom",
    ),
    pytest.param(
        (
            {},
            {"robotrules_precedence": FIRST},
            ["-s", "ROBOTRULES_PRECEDENCE=most-specific"],
            False,
        ),
        id="cmdline-over-attribute",
    ),
    pytest.param(
        (
            {"ROBOTRULES_PRECEDENCE": FIRST},
            {},
            ["-s", "ROBOTRULES_PRECEDENCE=most-specific"],
            False,
        ),
        id="cmdline-over-custom",
    ),
]


@pytest.mark.parametrize("case", PRECEDENCE_CASES)
@async_test
async def test_which_precedence_wins(mockserver: MockServer, tmp_path: Path, case: Case) -> None:
    custom, attributes, options, first_match = case
    got = await _forbidden(
        mockserver, tmp_path, custom=custom, attributes=attributes, options=options
    )
    assert got == ({"/projbot", "/probe/page"} if first_match else {"/projbot"})
