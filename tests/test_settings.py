"""The ROBOTRULES_* settings: defaults, the agent fallback chain, per-spider overrides, errors."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from crawling import BASE_SETTINGS, async_test, reactor_settings
from mockserver import install_loopback_dns
from scrapy import Spider
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from scrapy_robotrules import RobotRulesExtension, RobotRulesMiddleware
from scrapy_robotrules.settings import DEFAULTS, RobotRulesConfig, RobotRulesSettingError

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


STORES = "'memory', 'sqlite:///absolute/path.db', 'sqlite:relative/path.db' or 'redis://...'"

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
        ("ROBOTRULES_MAX_SIZE", 0, "a whole number, 1 or more"),
        ("ROBOTRULES_MAX_SIZE", 1.5, "a whole number, 1 or more"),
        ("ROBOTRULES_MAX_SIZE", "big", "a whole number, 1 or more"),
        ("ROBOTRULES_CACHE_SIZE", -1, "a whole number, 1 or more"),
        ("ROBOTRULES_CACHE_SIZE", True, "a whole number, 1 or more"),
        ("ROBOTRULES_RETRY_DELAY", 0, "a number of seconds, more than 0"),
        ("ROBOTRULES_RETRY_DELAY", "soon", "a number of seconds, more than 0"),
        ("ROBOTRULES_MAX_AGE", float("inf"), "a number of seconds, more than 0"),
        ("ROBOTRULES_UNREACHABLE_TIMEOUT", -1, "a number of seconds, 0 or more"),
        ("ROBOTRULES_UNREACHABLE_TIMEOUT", float("nan"), "a number of seconds, 0 or more"),
        ("ROBOTRULES_MAX_CRAWL_DELAY", [1], "a number of seconds, 0 or more"),
        ("ROBOTRULES_CRAWL_DELAY", "yes", "True or False (or 1, 0, 'true', 'false')"),
        ("ROBOTRULES_CRAWL_DELAY", 2, "True or False (or 1, 0, 'true', 'false')"),
        ("ROBOTRULES_USER_AGENT", "/1.0", "a user agent string that starts with a product token"),
        ("ROBOTRULES_USER_AGENT", 42, "a user agent string that starts with a product token"),
        ("ROBOTRULES_STORE", "memcached://cache", STORES),
        ("ROBOTRULES_STORE", "sqlite://host/robots.db", STORES),
        ("ROBOTRULES_STORE", None.__class__, STORES),
        ("ROBOTRULES_LEASE", 0, "a number of seconds, more than 0"),
        ("ROBOTRULES_CONCURRENT_FETCHES", 0, "a whole number, 1 or more"),
        ("ROBOTRULES_CACHE_BYTES", 0, "a whole number, 1 or more"),
        ("ROBOTRULES_CACHE_BYTES", "1MB", "a whole number, 1 or more"),
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


@async_test
async def test_a_bad_setting_stops_the_crawl_before_any_request() -> None:
    class Never(Spider):
        name = "never"
        start_urls = ["http://never.test/"]  # noqa: RUF012

    install_loopback_dns()
    settings = {
        **BASE_SETTINGS,
        **reactor_settings(),
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robotrules.Addon": 0},
        "ROBOTRULES_PRECEDENCE": "longest",
    }
    runner = CrawlerRunner(settings)
    crawler = runner.create_crawler(Never)
    with pytest.raises(RobotRulesSettingError, match=r"^ROBOTRULES_PRECEDENCE must be one of"):
        await runner.crawl(crawler)
    assert not crawler.stats.get_value("downloader/request_count")


def test_bad_settings_do_not_matter_when_robotstxt_obey_is_off() -> None:
    # The components are off (NotConfigured) before reading any ROBOTRULES_* setting.
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": False, "ROBOTRULES_PRECEDENCE": "x"})
    for component in (RobotRulesMiddleware, RobotRulesExtension):
        with pytest.raises(NotConfigured):
            component.from_crawler(crawler)
