"""Every setting the package reads is checked before the crawl, and a misspelt one is named.

The table of :mod:`scrapy_robotrules.crawl.config.table` is the one place
settings are read through: a value the project gives ends the program with
one line and exit status 1 (no traceback, in ``scrapy crawl`` and a
``CrawlerProcess`` script alike); a spider's ``custom_settings`` or
``robotrules_*`` attributes stop its crawl before any request, with one
ERROR line.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.crawler import CrawlerRunner

import scrapy_robotrules
from scrapy_robotrules.crawl.config.table import RENAMED, TABLE
from scrapy_robotrules.crawl.config.values import RobotRulesSettingError
from tests.helpers import REPO_ROOT as ROOT
from tests.helpers.crawling import (
    RecordingSpider,
    async_test,
    crawler_runner,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
    with_custom_settings,
)
from tests.helpers.mockserver import MockServer
from tests.helpers.projects import crawl_script, demo_project, run_in
from tests.helpers.variants import OURS

CRAWL_TESTS = True

PACKAGE = Path(scrapy_robotrules.__file__).resolve().parent
ADDON = {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robotrules.Addon": 0}}
SECRET = "s3cret"
PIN = "0" * 64

# The bad values the checks are asked about: (setting, value, what the line says).
BAD = [
    ("ROBOTRULES_MODE", "dry", "ROBOTRULES_MODE must be one of 'enforce', 'shadow', not 'dry'"),
    ("ROBOTRULES_POLICIES", "notjson", "ROBOTRULES_POLICIES must be a dict or a JSON object"),
    ("ROBOTRULES_AUDIT_BUFFER", -3, "ROBOTRULES_AUDIT_BUFFER must be a whole number from 1"),
    ("ROBOTRULES_MAX_CRAWL_DELAY_ACTION", "explode", "ROBOTRULES_MAX_CRAWL_DELAY_ACTION must be"),
    ("ROBOTRULES_SCHEDULE_SITEMAPS", "maybe", "ROBOTRULES_SCHEDULE_SITEMAPS must be True or"),
    ("ROBOTRULES_SITEMAP_FOLLOW", 5, "ROBOTRULES_SITEMAP_FOLLOW must be a list of regular"),
    ("ROBOTRULES_SITEMAP_FOLLOW", {"a": 1}, "ROBOTRULES_SITEMAP_FOLLOW must be a list of regular"),
    ("ROBOTRULES_SITEMAP_RULES", "parse", "ROBOTRULES_SITEMAP_RULES must be a list of (regex,"),
    ("ROBOTRULES_SITEMAP_RULES", {"ab": 1}, "ROBOTRULES_SITEMAP_RULES must be a list of (regex,"),
    (
        "ROBOTRULES_PINNED",
        '{"example.com": "abc"}',
        "ROBOTRULES_PINNED['example.com'] must be a SHA-256 in hex (64 characters), not 'abc'",
    ),
    (
        "ROBOTRULES_PINNED",
        {"https://example.com/robots.txt": "0" * 64},
        "ROBOTRULES_PINNED: 'https://example.com/robots.txt' is neither a host",
    ),
    ("ROBOTRULES_AUDIT", "/", "ROBOTRULES_AUDIT: cannot write the audit trail to '/' (a directory"),
    # A pin key that names no origin of its own (SPEC 8: it would pin nothing).
    (
        "ROBOTRULES_PINNED",
        json.dumps({"http://x.test:99999": PIN}),
        "ROBOTRULES_PINNED: 'http://x.test:99999' names no origin (Port out of range 0-65535)",
    ),
    (
        "ROBOTRULES_PINNED",
        json.dumps({"*.x.test": PIN}),
        "ROBOTRULES_PINNED: '*.x.test' names no origin (a host name is labels of",
    ),
    (
        "ROBOTRULES_PINNED",
        {"x" * 100_000 + ".test": PIN},
        "ROBOTRULES_PINNED: 'xxxxxxxxxx",
    ),
    (
        "ROBOTRULES_PINNED",
        json.dumps({f"http://u:{SECRET}@x.test": PIN}),
        "ROBOTRULES_PINNED: 'http://***@x.test' names credentials",
    ),
    # An audit target the system refuses, though a permission check passes it (for root).
    (
        "ROBOTRULES_AUDIT",
        "/proc/version",
        "ROBOTRULES_AUDIT: cannot write the audit trail to '/proc/version' (it does not open",
    ),
    (
        "ROBOTRULES_AUDIT",
        "/sys/kernel/notes",
        "ROBOTRULES_AUDIT: cannot write the audit trail to '/sys/kernel/notes' (it does not open",
    ),
    *(
        [
            (
                "ROBOTRULES_AUDIT",
                f"s3://AKIA:{SECRET}@bucket/audit.jsonl",
                "ROBOTRULES_AUDIT: cannot write the audit trail to 's3://bucket/audit.jsonl'"
                " (NotConfigured: missing boto3 library)",
            )
        ]
        if importlib.util.find_spec("boto3") is None
        else []
    ),
    (
        "ROBOTRULES_STORE",
        f"redis://:{SECRET}@localhost:6379/0?socket_timeout=abc",
        "ROBOTRULES_STORE = 'redis://***@localhost:6379/0?socket_timeout=abc' is refused by"
        " redis-py: ValueError: Invalid value for 'socket_timeout' in connection URL.",
    ),
    (
        "ROBOTRULES_POLICIES",
        {"*": {"crawl_delay": 10**400}},
        "ROBOTRULES_POLICIES['*']['crawl_delay'] must be True, False or a number of seconds,"
        " not a whole number of about 400 digits",
    ),
    (
        "ROBOTRULES_POLICIES",
        '{"*": {"crawl_delay": 1' + "0" * 400 + "}}",
        "ROBOTRULES_POLICIES has a number of 401 digits (at most 30)",
    ),
    (
        "ROBOTRULES_POLICIES",
        "[" * 100_000 + "]" * 100_000,
        "ROBOTRULES_POLICIES nests deeper than 16 levels",
    ),
]
IDS = [f"{name}={str(value)[:20]}" for name, value, _ in BAD]


def _one_line(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert SECRET not in done.stderr
    assert SECRET not in done.stdout
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"scrapy-robotrules: {message}"), line


@pytest.mark.parametrize(("name", "value", "message"), BAD, ids=IDS)
def test_a_crawler_process_script_ends_with_one_line_naming_the_setting(
    tmp_path: Path, name: str, value: object, message: str
) -> None:
    demo_project(tmp_path)
    script = crawl_script(tmp_path, {**ADDON, "TELNETCONSOLE_ENABLED": False, name: value})
    _one_line(run_in(tmp_path, [sys.executable, str(script)]), message)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [case for case in BAD if isinstance(case[1], str) and len(case[1]) < 1000],
    ids=lambda v: str(v)[:30],
)
def test_scrapy_crawl_with_a_bad_setting_ends_with_one_line(
    tmp_path: Path, name: str, value: str, message: str
) -> None:
    demo_project(tmp_path)
    done = run_in(
        tmp_path, [sys.executable, "-m", "scrapy.cmdline", "crawl", "demo", "-s", f"{name}={value}"]
    )
    _one_line(done, message)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class _ModeAttribute(RecordingSpider):
    robotrules_mode = "dry"


class _AgentAttribute(RecordingSpider):
    robotrules_user_agent = 5


@pytest.mark.parametrize(
    ("spider", "message"),
    [
        *(
            (with_custom_settings({name: value}, RecordingSpider), message)
            for name, value, message in BAD
        ),
        (_ModeAttribute, "robotrules_mode (attribute of spider 'recording') must be one of"),
        (_AgentAttribute, "robotrules_user_agent (attribute of spider 'recording') must be a"),
    ],
    ids=[*IDS, "robotrules_mode", "robotrules_user_agent"],
)
@async_test
async def test_a_spiders_bad_value_stops_its_crawl_with_one_error_line(
    spider: type[RecordingSpider], message: str
) -> None:
    runner = crawler_runner(OURS)
    crawler = runner.create_crawler(spider)
    handler = _Records()
    logging.getLogger("scrapy_robotrules").addHandler(handler)
    try:
        with pytest.raises(RobotRulesSettingError) as raised:
            await runner.crawl(crawler, start_urls=["http://never.test/"])
    finally:
        logging.getLogger("scrapy_robotrules").removeHandler(handler)
    assert str(raised.value).startswith(message)
    assert SECRET not in str(raised.value)
    assert not crawler.stats.get_value("downloader/request_count")
    assert [(r.levelname, r.getMessage()) for r in handler.records] == [
        ("ERROR", f"{raised.value}: the crawl cannot start")
    ]


def test_an_audit_path_through_a_file_is_refused_before_the_crawl(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file")
    target = tmp_path / "taken" / "audit.jsonl"
    with pytest.raises(SystemExit, match=r"^scrapy-robotrules: ROBOTRULES_AUDIT: cannot write"):
        CrawlerRunner({**ADDON, "ROBOTRULES_AUDIT": str(target)})
    CrawlerRunner({**ADDON, "ROBOTRULES_AUDIT": str(tmp_path / "new" / "audit.jsonl")})
    assert not (tmp_path / "new").exists()  # checked, nothing made yet


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_audit_path_that_cannot_be_written_is_refused_before_the_crawl(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(SystemExit, match="no permission to create files in"):
        CrawlerRunner({**ADDON, "ROBOTRULES_AUDIT": str(locked / "audit.jsonl")})


def test_a_store_url_redis_refuses_is_named_without_its_credentials() -> None:
    url = f"redis://bob:{SECRET}@cache:abc/0?password={SECRET}"
    with pytest.raises(SystemExit) as ended:
        CrawlerRunner({**ADDON, "ROBOTRULES_STORE": url})
    assert SECRET not in str(ended.value)
    assert str(ended.value).startswith(
        "scrapy-robotrules: ROBOTRULES_STORE = 'redis://***@cache:abc/0?password=***'"
        " is refused by redis-py: ValueError: Port could not be cast to integer"
    )
    CrawlerRunner({**ADDON, "ROBOTRULES_STORE": f"redis://bob:{SECRET}@cache:6379/0"})


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (
            f"redis+cluster://bob:{SECRET}@a:7000,b/0",
            "'redis+cluster://***@a:7000,b/0' is refused by redis-py: ValueError: a node must"
            " be host:port, not 'b'",
        ),
        (
            f"rediss+sentinel://:{SECRET}@a:26379,b:26379",
            "'rediss+sentinel://***@a:26379,b:26379' is refused by redis-py: ValueError: a"
            " Sentinel URL ends with /SERVICE or /SERVICE/db",
        ),
    ],
)
def test_a_cluster_or_sentinel_url_is_checked_before_the_crawl(url: str, problem: str) -> None:
    with pytest.raises(SystemExit) as ended:
        CrawlerRunner({**ADDON, "ROBOTRULES_STORE": url})
    assert SECRET not in str(ended.value)
    assert str(ended.value) == f"scrapy-robotrules: ROBOTRULES_STORE = {problem}"
    # Well formed, they are taken (nothing is contacted before the crawl).
    CrawlerRunner({**ADDON, "ROBOTRULES_STORE": f"redis+cluster://bob:{SECRET}@a:7000,b:7001"})
    CrawlerRunner({**ADDON, "ROBOTRULES_STORE": f"rediss+sentinel://:{SECRET}@a:26379/robots/1"})


class _Misspelt(RecordingSpider):
    robotrules_useragent = "MyBot/1.0"
    robotrules_max_size = 1000


@async_test
async def test_a_misspelt_setting_or_attribute_gets_one_warning_naming_the_real_one(
    mockserver: MockServer,
) -> None:
    settings = {**OURS, "ROBOTRULES_PRECEDANCE": "first-match", "ROBOTRULES_NOTHING_LIKE": 1}
    result = await run_spider(_Misspelt, settings, start_urls=[mockserver.url("a.test", "/")])
    assert result.crawled == [mockserver.url("a.test", "/")]
    assert result.messages("scrapy-robotrules", logging.WARNING) == [
        "ROBOTRULES_NOTHING_LIKE is not read by scrapy-robotrules and has no effect"
        " (no known name is close)",
        "ROBOTRULES_PRECEDANCE is not read by scrapy-robotrules and has no effect"
        " (did you mean ROBOTRULES_PRECEDENCE?)",
        "robotrules_max_size (attribute of spider 'recording') is not read by scrapy-robotrules"
        " and has no effect (set ROBOTRULES_MAX_SIZE in the spider's custom_settings instead)",
        "robotrules_useragent (attribute of spider 'recording') is not read by"
        " scrapy-robotrules and has no effect (did you mean robotrules_user_agent?)",
    ]


# The table is the one place: the package's source reads no setting around it.

_READS = {"get", "getbool", "getint", "getfloat", "getlist", "getdict", "getwithbase"}
_SETTING = re.compile(r"ROBOTRULES_[A-Z0-9_]+")


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_every_setting_the_package_names_is_in_the_table() -> None:
    # Or is the old name of one (RENAMED), still read for it.
    named = {
        (where, node.value)
        for where, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _SETTING.fullmatch(node.value)
    }
    assert named, "the scan finds the names"
    known = TABLE.keys() | RENAMED.keys()
    assert {(where, name) for where, name in named if name not in known} == set()


def test_no_component_reads_a_setting_or_attribute_but_through_the_table() -> None:
    found = []
    for where, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            first = node.args[1] if len(node.args) > 1 else node.args[0]
            func = node.func
            reads_setting = (
                isinstance(func, ast.Attribute)
                and func.attr in _READS
                and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).startswith("ROBOTRULES_")
            )
            reads_attribute = (
                isinstance(func, ast.Name)
                and func.id in ("getattr", "hasattr", "defined")
                and isinstance(first, ast.Constant)
                and str(first.value).startswith("robotrules_")
            )
            if reads_setting or reads_attribute:
                found.append((where, node.lineno))
    assert found == []


def test_every_setting_and_attribute_of_the_table_is_documented() -> None:
    # The settings reference: one entry per setting (its values come from the
    # table itself), and the spider attributes' table, made from ATTRIBUTES.
    reference = (ROOT / "docs" / "reference" / "settings.rst").read_text(encoding="utf-8")
    assert [name for name in TABLE if f".. robotrules-setting:: {name}\n" not in reference] == []
    assert [old for old in RENAMED if f"   * - ``{old}``\n" not in reference] == []
    assert ".. robotrules-spider-attributes::" in reference
