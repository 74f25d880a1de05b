"""The ROBOTRULES_* settings: defaults, the agent fallback chain, per-spider overrides, errors."""

from __future__ import annotations

import dataclasses
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
import scrapy
import scrapy.crawler
from scrapy import Spider
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from scrapy_robotrules import RobotRulesExtension, RobotRulesMiddleware
from scrapy_robotrules.crawl.config.settings import (
    DEFAULTS,
    RobotRulesConfig,
    RobotRulesSettingError,
)
from scrapy_robotrules.engine.robots.hostile.automata import automata, set_automaton_bytes
from tests.helpers.crawling import (
    RecordingSpider,
    async_test,
    crawler_runner,
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.projects import crawl_script, demo_project, run_in
from tests.helpers.variants import OURS

CRAWL_TESTS = True


def config(
    settings: dict[str, Any] | None = None, spider: Spider | None = None
) -> RobotRulesConfig:
    return RobotRulesConfig.from_crawler(get_crawler(settings_dict=settings), spider)


def test_defaults_are_documented_and_used() -> None:
    got = config()
    assert got.precedence == DEFAULTS["ROBOTRULES_PRECEDENCE"] == "most-specific"
    assert got.agent_match == DEFAULTS["ROBOTRULES_AGENT_MATCH"] == "token"
    assert got.max_size == DEFAULTS["ROBOTRULES_MAX_SIZE"] == 512_000
    assert got.unauthorized == DEFAULTS["ROBOTRULES_UNAUTHORIZED"] == "allow"
    assert got.retry_delay == DEFAULTS["ROBOTRULES_RETRY_DELAY"] == 5
    assert got.unreachable_timeout == DEFAULTS["ROBOTRULES_UNREACHABLE_TIMEOUT"] == 300
    assert got.max_age == DEFAULTS["ROBOTRULES_MAX_AGE"] == 86_400
    assert got.cache_size == DEFAULTS["ROBOTRULES_CACHE_SIZE"] == 100_000
    assert got.cache_bytes == DEFAULTS["ROBOTRULES_CACHE_BYTES"] == 512 * 1024 * 1024
    assert got.crawl_delay is DEFAULTS["ROBOTRULES_CRAWL_DELAY"] is True
    assert got.max_crawl_delay == DEFAULTS["ROBOTRULES_MAX_CRAWL_DELAY"] == 60
    assert got.store == DEFAULTS["ROBOTRULES_STORE"] == "memory"
    assert got.concurrent_fetches == DEFAULTS["ROBOTRULES_CONCURRENT_FETCHES"] == 64
    assert got.lease == DEFAULTS["ROBOTRULES_LEASE"] == 10
    assert DEFAULTS["ROBOTRULES_USER_AGENT"] is None
    assert got.user_agent.startswith("Scrapy/")
    assert got.product_token == "scrapy"
    assert {f.name for f in dataclasses.fields(RobotRulesConfig)} == {
        name.removeprefix("ROBOTRULES_").lower() for name in DEFAULTS
    }


def test_none_means_the_default() -> None:
    assert config(dict.fromkeys(DEFAULTS)) == config()


def test_every_setting_is_read() -> None:
    got = config(
        {
            "ROBOTRULES_PRECEDENCE": "first-match",
            "ROBOTRULES_AGENT_MATCH": "substring",
            "ROBOTRULES_USER_AGENT": "MyBot/1.0",
            "ROBOTRULES_MAX_SIZE": 1000,
            "ROBOTRULES_UNAUTHORIZED": "disallow",
            "ROBOTRULES_RETRY_DELAY": 0.5,
            "ROBOTRULES_UNREACHABLE_TIMEOUT": 0,
            "ROBOTRULES_MAX_AGE": 3600,
            "ROBOTRULES_CACHE_SIZE": 2,
            "ROBOTRULES_CRAWL_DELAY": False,
            "ROBOTRULES_MAX_CRAWL_DELAY": 2.5,
            "ROBOTRULES_STORE": "redis://cache:6379/3",
            "ROBOTRULES_LEASE": 30,
            "ROBOTRULES_CONCURRENT_FETCHES": 8,
        }
    )
    assert got == RobotRulesConfig(
        user_agent="MyBot/1.0",
        precedence="first-match",
        agent_match="substring",
        max_size=1000,
        unauthorized="disallow",
        retry_delay=0.5,
        unreachable_timeout=0.0,
        max_age=3600.0,
        cache_size=2,
        crawl_delay=False,
        max_crawl_delay=2.5,
        store="redis://cache:6379/3",
        lease=30.0,
        concurrent_fetches=8,
    )


def test_command_line_strings_are_read() -> None:
    got = config(
        {
            "ROBOTRULES_RETRY_DELAY": "2.5",
            "ROBOTRULES_MAX_SIZE": "1000",
            "ROBOTRULES_CACHE_SIZE": "10.0",
            "ROBOTRULES_CRAWL_DELAY": "false",
            "ROBOTRULES_MAX_AGE": " 60 ",
        }
    )
    assert (got.retry_delay, got.max_size, got.cache_size) == (2.5, 1000, 10)
    assert (got.crawl_delay, got.max_age) == (False, 60.0)
    assert config({"ROBOTRULES_CRAWL_DELAY": "1"}).crawl_delay is True
    assert config({"ROBOTRULES_CRAWL_DELAY": 0}).crawl_delay is False


class AgentSpider(Spider):
    name = "agent"
    user_agent = "SpiderBot/3"


@pytest.mark.parametrize(
    ("settings", "spider", "expected"),
    [
        ({"USER_AGENT": "Setting/1"}, None, "Setting/1"),
        ({"USER_AGENT": "Setting/1"}, AgentSpider(), "SpiderBot/3"),
        (
            {"ROBOTSTXT_USER_AGENT": "Robots/2", "USER_AGENT": "Setting/1"},
            AgentSpider(),
            "Robots/2",
        ),
        (
            {"ROBOTRULES_USER_AGENT": "Rules/4", "ROBOTSTXT_USER_AGENT": "Robots/2"},
            AgentSpider(),
            "Rules/4",
        ),
        ({"ROBOTRULES_USER_AGENT": "", "ROBOTSTXT_USER_AGENT": "Robots/2"}, None, "Robots/2"),
    ],
)
def test_the_agent_falls_back_in_order(
    settings: dict[str, Any], spider: Spider | None, expected: str
) -> None:
    assert config(settings, spider).user_agent == expected


def test_spider_attributes_override_every_setting() -> None:
    class Overriding(AgentSpider):
        robotrules_user_agent = "Attribute/5"
        robotrules_precedence = "allow-first"

    settings = {"ROBOTRULES_USER_AGENT": "Rules/4", "ROBOTRULES_PRECEDENCE": "first-match"}
    got = config(settings, Overriding())
    assert (got.user_agent, got.precedence) == ("Attribute/5", "allow-first")
    assert got.product_token == "attribute"


def test_custom_settings_override_project_settings() -> None:
    class Custom(Spider):
        name = "custom"
        custom_settings = {  # noqa: RUF012
            "ROBOTRULES_PRECEDENCE": "first-match",
            "ROBOTRULES_MAX_AGE": 10,
        }

    crawler = get_crawler(Custom, {"ROBOTRULES_PRECEDENCE": "allow-first"})
    got = RobotRulesConfig.from_crawler(crawler, Custom())
    assert (got.precedence, got.max_age) == ("first-match", 10.0)


STORES = (
    "'memory', 'sqlite:///absolute/path.db', 'sqlite:relative/path.db', 'redis://...',"
    " 'redis+cluster://...' or 'redis+sentinel://...'"
)

CHOICES = {
    "ROBOTRULES_PRECEDENCE": "one of 'most-specific', 'first-match', 'allow-first'",
    "ROBOTRULES_AGENT_MATCH": "one of 'token', 'substring'",
    "ROBOTRULES_UNAUTHORIZED": "one of 'allow', 'disallow'",
}


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("ROBOTRULES_PRECEDENCE", "longest", CHOICES["ROBOTRULES_PRECEDENCE"]),
        ("ROBOTRULES_PRECEDENCE", "Most-Specific", CHOICES["ROBOTRULES_PRECEDENCE"]),
        ("ROBOTRULES_AGENT_MATCH", "regex", CHOICES["ROBOTRULES_AGENT_MATCH"]),
        ("ROBOTRULES_UNAUTHORIZED", "deny", CHOICES["ROBOTRULES_UNAUTHORIZED"]),
        ("ROBOTRULES_UNAUTHORIZED", 1, CHOICES["ROBOTRULES_UNAUTHORIZED"]),
        ("ROBOTRULES_MAX_SIZE", 0, "a whole number from 1 to 10000000"),
        ("ROBOTRULES_MAX_SIZE", 1.5, "a whole number from 1 to 10000000"),
        ("ROBOTRULES_MAX_SIZE", "big", "a whole number from 1 to 10000000"),
        ("ROBOTRULES_MAX_SIZE", 10**12, "a whole number from 1 to 10000000"),
        ("ROBOTRULES_CACHE_SIZE", -1, "a whole number from 1 to 100000000"),
        ("ROBOTRULES_CACHE_SIZE", True, "a whole number from 1 to 100000000"),
        ("ROBOTRULES_CACHE_SIZE", "1e300", "a whole number from 1 to 100000000"),
        ("ROBOTRULES_RETRY_DELAY", 0, "a number of seconds, more than 0 and at most 600"),
        ("ROBOTRULES_RETRY_DELAY", "soon", "a number of seconds, more than 0 and at most 600"),
        ("ROBOTRULES_RETRY_DELAY", 601, "a number of seconds, more than 0 and at most 600"),
        (
            "ROBOTRULES_MAX_AGE",
            float("inf"),
            "a number of seconds, more than 0 and at most 31536000",
        ),
        ("ROBOTRULES_MAX_AGE", "1e300", "a number of seconds, more than 0 and at most 31536000"),
        ("ROBOTRULES_MIN_AGE", 1e300, "a number of seconds, 0 or more and at most 31536000"),
        ("ROBOTRULES_UNREACHABLE_TIMEOUT", -1, "a number of seconds, 0 or more and at most 604800"),
        (
            "ROBOTRULES_UNREACHABLE_TIMEOUT",
            float("nan"),
            "a number of seconds, 0 or more and at most 604800",
        ),
        ("ROBOTRULES_MAX_CRAWL_DELAY", [1], "a number of seconds, 0 or more and at most 86400"),
        ("ROBOTRULES_MAX_CRAWL_DELAY", 1e9, "a number of seconds, 0 or more and at most 86400"),
        ("ROBOTRULES_CRAWL_DELAY", "yes", "True or False (or 1, 0, 'true', 'false')"),
        ("ROBOTRULES_CRAWL_DELAY", 2, "True or False (or 1, 0, 'true', 'false')"),
        ("ROBOTRULES_USER_AGENT", "/1.0", "a user agent string that starts with a product token"),
        ("ROBOTRULES_USER_AGENT", 42, "a user agent string that starts with a product token"),
        ("ROBOTRULES_STORE", "memcached://cache", STORES),
        ("ROBOTRULES_STORE", "sqlite://host/robots.db", STORES),
        ("ROBOTRULES_STORE", None.__class__, STORES),
        ("ROBOTRULES_LEASE", 0, "a number of seconds, more than 0 and at most 3600"),
        ("ROBOTRULES_LEASE", "1e300", "a number of seconds, more than 0 and at most 3600"),
        ("ROBOTRULES_CONCURRENT_FETCHES", 0, "a whole number from 1 to 10000"),
        ("ROBOTRULES_MAX_WAITING_PER_ORIGIN", -1, "a whole number from 0 to 10000000"),
        ("ROBOTRULES_CACHE_BYTES", 0, "a whole number from 1 to 1099511627776"),
        ("ROBOTRULES_CACHE_BYTES", "1MB", "a whole number from 1 to 1099511627776"),
    ],
)
def test_a_bad_value_gets_one_message_naming_the_setting_and_the_choices(
    name: str, value: object, expected: str
) -> None:
    with pytest.raises(RobotRulesSettingError) as raised:
        config({name: value})
    assert str(raised.value) == f"{name} must be {expected}, not {value!r}"
    assert isinstance(raised.value, ValueError)


def test_a_bad_spider_attribute_is_named_with_its_spider() -> None:
    class Bad(Spider):
        name = "bad"
        robotrules_precedence = "longest"

    with pytest.raises(RobotRulesSettingError) as raised:
        config(None, Bad())
    assert str(raised.value) == (
        "robotrules_precedence (attribute of spider 'bad') must be one of"
        " 'most-specific', 'first-match', 'allow-first', not 'longest'"
    )


def test_no_agent_at_all_is_an_error() -> None:
    with pytest.raises(RobotRulesSettingError, match=r"no user agent to match robots\.txt groups"):
        config({"USER_AGENT": ""})


def test_a_store_url_in_an_error_shows_no_password() -> None:
    with pytest.raises(RobotRulesSettingError) as raised:
        config({"ROBOTRULES_STORE": "memcached://bob:s3cret@cache/0?password=s3cret"})
    assert "s3cret" not in str(raised.value)
    assert "memcached://***@cache/0?password=***" in str(raised.value)


@async_test
async def test_a_bad_spider_setting_stops_its_crawl_before_any_request_with_one_error() -> None:
    class Never(Spider):
        name = "never"
        start_urls = ["http://never.test/"]  # noqa: RUF012
        custom_settings = {"ROBOTRULES_LEASE": 1e300}  # noqa: RUF012

    runner = crawler_runner({"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robotrules.Addon": 0}})
    crawler = runner.create_crawler(Never)
    handler = _Records()
    logging.getLogger("scrapy_robotrules").addHandler(handler)
    try:
        with pytest.raises(RobotRulesSettingError, match=r"^ROBOTRULES_LEASE must be a number"):
            await runner.crawl(crawler)
    finally:
        logging.getLogger("scrapy_robotrules").removeHandler(handler)
    assert not crawler.stats.get_value("downloader/request_count")
    assert [(r.levelname, r.getMessage()) for r in handler.records] == [
        (
            "ERROR",
            "ROBOTRULES_LEASE must be a number of seconds, more than 0 and at most 3600,"
            " not 1e+300: the crawl cannot start",
        )
    ]


def test_a_bad_process_setting_ends_the_program_as_the_runner_is_built() -> None:
    settings = {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robotrules.Addon": 0}}
    with pytest.raises(SystemExit) as raised:
        CrawlerRunner({**settings, "ROBOTRULES_MAX_AGE": "1e300"})
    assert str(raised.value) == (
        "scrapy-robotrules: ROBOTRULES_MAX_AGE must be a number of seconds,"
        " more than 0 and at most 31536000, not '1e300'"
    )
    # The agent is left to the spiders, which may name one; off means unchecked.
    CrawlerRunner({**settings, "USER_AGENT": ""})
    CrawlerRunner({**settings, "ROBOTSTXT_OBEY": False, "ROBOTRULES_LEASE": -1})


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


ASYNC_PROCESS = hasattr(scrapy.crawler, "AsyncCrawlerProcess")
"""Scrapy 2.14+: ``scrapy crawl`` runs an AsyncCrawlerProcess (before, a Deferred-based one)."""

LEASE_ERROR = "ROBOTRULES_LEASE must be a number of seconds, more than 0 and at most 3600"


@pytest.mark.parametrize(
    ("options", "custom"),
    [
        (["-s", "ROBOTRULES_LEASE=1e300"], {}),  # the project's: refused before any crawl
        ([], {"ROBOTRULES_LEASE": "1e300"}),  # the spider's: refused as its crawl starts
        (["-s", "FORCE_CRAWLER_PROCESS=True"], {"ROBOTRULES_LEASE": "1e300"}),
    ],
)
def test_scrapy_crawl_with_a_bad_setting_exits_non_zero_with_one_clear_line(
    tmp_path: Path, options: list[str], custom: dict[str, Any]
) -> None:
    demo_project(tmp_path, custom)
    done = run_in(tmp_path, [sys.executable, "-m", "scrapy.cmdline", "crawl", "demo", *options])
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if LEASE_ERROR in line]
    assert errors, done.stderr
    assert "ERROR" in errors[0] or errors[0].startswith("scrapy-robotrules: ")
    assert "Spider opened" not in done.stderr
    deferred_based = "FORCE_CRAWLER_PROCESS=True" in options or not ASYNC_PROCESS
    if deferred_based and custom:
        # Scrapy's Deferred-based CrawlerProcess (``scrapy crawl`` before
        # Scrapy 2.14) reports the failed crawl as an unhandled error:
        # Twisted's short traceback, which ends with the same message.
        assert done.stderr.rstrip().splitlines()[-1].endswith(f"{LEASE_ERROR}, not '1e300'")
    else:
        assert "Traceback" not in done.stderr, done.stderr
        assert len(errors) == 1


@pytest.mark.parametrize("process", ["CrawlerProcess", "AsyncCrawlerProcess"])
def test_a_crawler_process_script_with_a_bad_setting_exits_non_zero_with_one_line(
    tmp_path: Path, process: str
) -> None:
    if not hasattr(scrapy.crawler, process):
        pytest.skip(f"no {process} in Scrapy {scrapy.__version__}")
    demo_project(tmp_path, {})
    settings = {
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robotrules.Addon": 0},
        "ROBOTRULES_MAX_AGE": 1e300,
    }
    script = crawl_script(tmp_path, settings, process)
    done = run_in(tmp_path, [sys.executable, str(script)])
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "scrapy-robotrules: ROBOTRULES_MAX_AGE must be a number of seconds,"
        " more than 0 and at most 31536000, not 1e+300"
    ]


def test_bad_settings_do_not_matter_when_robotstxt_obey_is_off() -> None:
    # The components are off (NotConfigured) before reading any ROBOTRULES_* setting.
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": False, "ROBOTRULES_PRECEDENCE": "x"})
    for component in (RobotRulesMiddleware, RobotRulesExtension):
        with pytest.raises(NotConfigured):
            component.from_crawler(crawler)


def test_the_byte_budget_reaches_the_crawlers_rules_cache() -> None:
    from scrapy_robotrules.crawl.manager import RobotsManager
    from scrapy_robotrules.engine.stores import MemoryStore

    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTRULES_CACHE_BYTES": 4096})
    store = RobotsManager.for_crawler(crawler).db.store
    assert isinstance(store, MemoryStore)
    assert store.max_bytes == 4096


def test_the_automaton_budget_is_a_whole_number_of_bytes() -> None:
    assert config().automaton_bytes == DEFAULTS["ROBOTRULES_AUTOMATON_BYTES"] == 64 * 1024 * 1024
    assert config({"ROBOTRULES_AUTOMATON_BYTES": 0}).automaton_bytes == 0
    with pytest.raises(RobotRulesSettingError) as raised:
        config({"ROBOTRULES_AUTOMATON_BYTES": -1})
    assert str(raised.value) == (
        "ROBOTRULES_AUTOMATON_BYTES must be a whole number from 0 to 1099511627776, not -1"
    )


@async_test
async def test_the_automaton_budget_reaches_the_engine(mockserver: MockServer) -> None:
    """With ``ROBOTRULES_AUTOMATON_BYTES = 0`` no automaton is kept: every check builds one.

    The process's default budget keeps the one file's automaton after its first check.
    Its literals are of three lengths: those of one or two are looked up for a path
    this short, with no automaton (see ``engine.robots.hostile.windows``).
    """
    rules = "".join(
        f"Disallow: /*word{i:03}x{'y' * (i % 3)}\n"
        for i in range(100)  # above AUTOMATON_MIN
    )
    mockserver.set_robots("many.test", Reply(200, ("User-agent: *\n" + rules).encode()))
    urls = [mockserver.url("many.test", f"/page{i}") for i in range(3)]
    urls.append(mockserver.url("many.test", "/a-word042x"))
    budget, built = automata.max_bytes, automata.built
    try:
        settings = {**OURS, "ROBOTRULES_AUTOMATON_BYTES": 0}
        result = await run_spider(RecordingSpider, settings, start_urls=urls)
        assert automata.max_bytes == 0
        assert (len(automata), automata.weight) == (0, 0)
        assert automata.built - built >= len(urls)
    finally:
        set_automaton_bytes(budget)
    assert sorted(result.crawled) == sorted(urls[:3])
    assert result.ignored == urls[3:]
