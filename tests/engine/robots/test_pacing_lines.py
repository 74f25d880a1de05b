"""SPEC 6: Crawl-delay, Request-rate, Visit-time, Sitemap and Host."""

from __future__ import annotations

import datetime as dt

import pytest

from scrapy_robotrules import RequestRate, RobotsTxt, UtcWindow
from scrapy_robotrules.engine.robots.pacing_lines import (
    parse_crawl_delay,
    parse_request_rate,
    parse_window,
)

UTC = dt.timezone.utc


def group(*members: str, agent: str = "*") -> RobotsTxt:
    """A file of one group for ``agent`` with ``members``."""
    return RobotsTxt.parse(f"User-agent: {agent}\n" + "".join(f"{m}\n" for m in members))


def window(start: str, end: str) -> UtcWindow:
    return UtcWindow(dt.time.fromisoformat(start), dt.time.fromisoformat(end))


# Crawl-delay.


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("5", 5.0),
        ("0", 0.0),
        ("10", 10.0),
        ("1.5", 1.5),
        ("0.25", 0.25),
        (".5", 0.5),
        # SPEC 6 says "float": exponents and signs are floats too.
        ("1e3", 1000.0),
        ("+2", 2.0),
        ("-0", 0.0),
    ],
)
def test_crawl_delay_numbers(value: str, seconds: float) -> None:
    assert group(f"Crawl-delay: {value}").crawl_delay("bot") == seconds


@pytest.mark.parametrize(
    "value", ["abc", "-1", "-0.5", "inf", "nan", "NaN", "1e400", "1_0", "1,5", "5s", "\u0663"]
)
def test_invalid_crawl_delay_is_ignored(value: str) -> None:
    assert group(f"Crawl-delay: {value}").crawl_delay("bot") is None


def test_invalid_crawl_delay_does_not_hide_a_valid_one() -> None:
    assert group("Crawl-delay: abc", "Crawl-delay: 3").crawl_delay("bot") == 3


def test_no_crawl_delay_is_none() -> None:
    assert group("Disallow: /x").crawl_delay("bot") is None


def test_crawl_delay_value_parser() -> None:
    assert parse_crawl_delay("2.5") == 2.5
    assert parse_crawl_delay("inf") is None
    assert parse_crawl_delay("-1") is None


def test_crawl_delay_of_merged_groups_is_the_largest() -> None:
    robots = RobotsTxt.parse(
        "User-agent: bot\nCrawl-delay: 2\nDisallow: /a\n\n"
        "User-agent: other\nCrawl-delay: 60\nDisallow: /b\n\n"
        "User-agent: bot\nCrawl-delay: 5\n"
    )
    assert robots.crawl_delay("bot") == 5
    assert robots.crawl_delay("other") == 60


def test_crawl_delay_of_merged_wildcard_groups_is_the_largest() -> None:
    robots = RobotsTxt.parse("User-agent: *\nCrawl-delay: 7\n\nUser-agent: *\nCrawl-delay: 3\n")
    assert robots.crawl_delay("anybot") == 7


def test_crawl_delay_is_per_group() -> None:
    robots = RobotsTxt.parse(
        "User-agent: bot\nCrawl-delay: 2\nDisallow: /a\n\nUser-agent: *\nCrawl-delay: 9\n"
    )
    assert robots.crawl_delay("bot") == 2  # a specific group never inherits from *
    assert robots.crawl_delay("other") == 9


def test_crawl_delay_without_a_rule_between_user_agents_is_shared() -> None:
    # SPEC 2: only a rule line ends the run of User-agent lines, so one group.
    robots = RobotsTxt.parse("User-agent: bot\nCrawl-delay: 2\n\nUser-agent: *\nCrawl-delay: 9\n")
    assert robots.crawl_delay("bot") == 9
    assert robots.crawl_delay("other") == 9


def test_crawl_delay_agent_is_its_product_token() -> None:
    robots = RobotsTxt.parse("User-agent: MyBot\nCrawl-delay: 4\n")
    assert robots.crawl_delay("mybot/1.2 (+https://x)") == 4


def test_crawl_delay_before_any_user_agent_is_ignored() -> None:
    robots = RobotsTxt.parse("Crawl-delay: 4\nUser-agent: *\nDisallow: /x\n")
    assert robots.crawl_delay("bot") is None


def test_crawl_delay_misspelt_and_without_colon() -> None:
    assert group("Crawl delay: 3").crawl_delay("bot") == 3
    assert group("crawl-delay 4").crawl_delay("bot") == 4


# Per-agent values under both matching styles (a rule line ends each group).

STYLES = (
    "User-agent: bot\nCrawl-delay: 2\nRequest-rate: 1/2\nVisit-time: 0100-0200\nDisallow: /a\n\n"
    "User-agent: *\nCrawl-delay: 9\nRequest-rate: 1/9\nVisit-time: 0900-1000\nDisallow: /b\n\n"
    "User-agent: bot\nCrawl-delay: 5\nRequest-rate: 1/5\nVisit-time: 0500-0600\n"
)


def test_token_style_merges_every_group_naming_the_token() -> None:
    robots = RobotsTxt.parse(STYLES)
    assert robots.crawl_delay("bot", "token") == 5
    assert robots.request_rate("bot", "token") == RequestRate(1, 5.0, None)
    assert robots.visit_time("bot", "token") == [
        window("01:00", "02:00"),
        window("05:00", "06:00"),
    ]


def test_token_style_needs_the_exact_token() -> None:
    robots = RobotsTxt.parse(STYLES)
    assert robots.crawl_delay("robot", "token") == 9
    assert robots.request_rate("robot", "token") == RequestRate(1, 9.0, None)
    assert robots.visit_time("robot", "token") == [window("09:00", "10:00")]


def test_substring_style_takes_the_first_group_alone() -> None:
    robots = RobotsTxt.parse(STYLES)
    for agent in ("bot", "Robot/1.0", "spambot"):
        assert robots.crawl_delay(agent, "substring") == 2
        assert robots.request_rate(agent, "substring") == RequestRate(1, 2.0, None)
        assert robots.visit_time(agent, "substring") == [window("01:00", "02:00")]


def test_substring_style_falls_back_to_the_wildcard() -> None:
    robots = RobotsTxt.parse(STYLES)
    assert robots.crawl_delay("crawler", "substring") == 9


def test_invalid_agent_match_is_refused() -> None:
    with pytest.raises(ValueError, match="'token', 'substring'"):
        RobotsTxt.parse(STYLES).crawl_delay("bot", "regex")  # type: ignore[arg-type]


# Request-rate.


@pytest.mark.parametrize(
    ("value", "requests", "seconds"),
    [
        ("1/5", 1, 5.0),
        ("1/5s", 1, 5.0),
        ("3/10", 3, 10.0),
        ("1/1m", 1, 60.0),
        ("10/1m", 10, 60.0),
        ("1/2h", 1, 7200.0),
        ("100/1d", 100, 86400.0),
        ("1 / 5", 1, 5.0),
        ("1/1M", 1, 60.0),
    ],
)
def test_request_rate_units(value: str, requests: int, seconds: float) -> None:
    assert parse_request_rate(value) == RequestRate(requests, seconds, None)
    assert group(f"Request-rate: {value}").request_rate("bot") == RequestRate(
        requests, seconds, None
    )


def test_request_rate_delay_is_seconds_over_requests() -> None:
    assert RequestRate(10, 60.0, None).delay == 6
    assert RequestRate(1, 5.0, None).delay == 5
    rate = group("Request-rate: 4/1m").request_rate("bot")
    assert rate is not None
    assert rate.delay == 15


def test_request_rate_with_a_window() -> None:
    rate = group("Request-rate: 1/10 0800-1700").request_rate("bot")
    assert rate == RequestRate(1, 10.0, window("08:00", "17:00"))


def test_request_rate_window_may_have_blanks_around_the_dash() -> None:
    assert parse_request_rate("1/10 0800 - 1700") == RequestRate(1, 10.0, window("08:00", "17:00"))


@pytest.mark.parametrize(
    "value",
    [
        *("0/5", "1/0", "0/0", "1/0m"),  # zero
        *("abc", "1", "1/", "/5", "-1/5", "1.5/5", "1/5x"),  # not n/m[unit]
        *("1/5 soon", "1/5 2500-0100", "1/5 0800-1760", "1/5 0800"),  # bad window
    ],
)
def test_invalid_or_zero_request_rate_is_ignored(value: str) -> None:
    assert parse_request_rate(value) is None
    assert group(f"Request-rate: {value}").request_rate("bot") is None


def test_the_most_restrictive_request_rate_wins() -> None:
    robots = group("Request-rate: 1/5", "Request-rate: 1/1m", "Request-rate: 10/1m")
    assert robots.request_rate("bot") == RequestRate(1, 60.0, None)


def test_invalid_request_rate_does_not_hide_a_valid_one() -> None:
    assert group("Request-rate: 0/5", "Request-rate: 2/10").request_rate("bot") == RequestRate(
        2, 10.0, None
    )


def test_request_rate_misspelt() -> None:
    assert group("Request rate: 1/3").request_rate("bot") == RequestRate(1, 3.0, None)


# Visit-time.


def test_visit_time_window() -> None:
    assert group("Visit-time: 0600-0845").visit_time("bot") == [window("06:00", "08:45")]


def test_no_visit_time_means_any_time() -> None:
    assert group("Disallow: /x").visit_time("bot") == []


def test_several_visit_times_kept_in_order() -> None:
    robots = group("Visit-time: 2200-2300", "Visit-time: 0100-0200")
    assert robots.visit_time("bot") == [window("22:00", "23:00"), window("01:00", "02:00")]


@pytest.mark.parametrize(
    "value", ["0800", "08:00-09:00", "2400-0100", "0860-0900", "abc", "800-900", "0800-"]
)
def test_invalid_visit_time_is_ignored(value: str) -> None:
    assert parse_window(value) is None
    assert group(f"Visit-time: {value}").visit_time("bot") == []


def test_visit_time_misspelt() -> None:
    assert group("Visit time: 0100-0200").visit_time("bot") == [window("01:00", "02:00")]


def test_window_contains_times_within_it() -> None:
    day = window("08:00", "17:00")
    assert dt.time(8, 0) in day
    assert dt.time(12, 30) in day
    assert dt.time(17, 0) in day
    assert dt.time(7, 59) not in day
    assert dt.time(17, 1) not in day
    assert dt.time(23, 0) not in day


def test_window_wraps_past_midnight() -> None:
    night = window("23:00", "01:00")
    assert dt.time(23, 0) in night
    assert dt.time(23, 30) in night
    assert dt.time(0, 0) in night
    assert dt.time(0, 30) in night
    assert dt.time(1, 0) in night
    assert dt.time(1, 1) not in night
    assert dt.time(12, 0) not in night
    assert dt.time(22, 59) not in night


def test_window_contains_aware_datetimes_by_their_utc_time() -> None:
    night = window("23:00", "01:00")
    assert dt.datetime(2024, 6, 1, 23, 30, tzinfo=UTC) in night
    assert dt.datetime(2024, 6, 1, 12, 0, tzinfo=UTC) not in night
    # 01:30 at UTC+2 is 23:30 UTC the day before: inside.
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert dt.datetime(2024, 6, 2, 1, 30, tzinfo=plus_two) in night
    # 23:30 at UTC-5 is 04:30 UTC: outside.
    minus_five = dt.timezone(dt.timedelta(hours=-5))
    assert dt.datetime(2024, 6, 1, 23, 30, tzinfo=minus_five) not in night


def test_window_contains_nothing_else() -> None:
    day = window("00:00", "23:59")
    assert "1200" not in day
    assert 1200 not in day
    assert None not in day


def test_window_reads_as_utc() -> None:
    assert str(window("06:00", "08:45")) == "0600-0845 UTC"


# Sitemap.

ROBOTS_URL = "http://a.com/dir/robots.txt"


def test_sitemaps_are_file_wide() -> None:
    robots = RobotsTxt.parse(
        "Sitemap: http://a.com/1.xml\n"
        "User-agent: bot\nDisallow: /x\nSitemap: http://a.com/2.xml\n\n"
        "User-agent: *\nDisallow: /y\n"
        "Sitemap: http://a.com/3.xml\n"
    )
    assert robots.sitemaps == ["http://a.com/1.xml", "http://a.com/2.xml", "http://a.com/3.xml"]


def test_sitemap_does_not_end_a_group() -> None:
    robots = RobotsTxt.parse(
        "User-agent: *\nDisallow: /x\nSitemap: http://a.com/s.xml\nDisallow: /y\n"
    )
    assert not robots.allowed("/y", "bot")


def test_sitemaps_keep_file_order() -> None:
    robots = RobotsTxt.parse("Sitemap: http://a.com/z.xml\nSitemap: http://a.com/a.xml\n")
    assert robots.sitemaps == ["http://a.com/z.xml", "http://a.com/a.xml"]


def test_duplicate_sitemaps_are_dropped() -> None:
    robots = RobotsTxt.parse(
        "Sitemap: http://a.com/a.xml\nSitemap: http://a.com/b.xml\nSitemap: http://a.com/a.xml\n"
    )
    assert robots.sitemaps == ["http://a.com/a.xml", "http://a.com/b.xml"]


def test_relative_sitemaps_resolve_against_the_robots_url() -> None:
    robots = RobotsTxt.parse(
        "Sitemap: /root.xml\nSitemap: here.xml\nSitemap: http://b.com/abs.xml\n", ROBOTS_URL
    )
    assert robots.sitemaps == [
        "http://a.com/root.xml",
        "http://a.com/dir/here.xml",
        "http://b.com/abs.xml",
    ]


def test_sitemaps_that_resolve_alike_are_one() -> None:
    robots = RobotsTxt.parse("Sitemap: /s.xml\nSitemap: http://a.com/s.xml\n", ROBOTS_URL)
    assert robots.sitemaps == ["http://a.com/s.xml"]


def test_relative_sitemaps_are_kept_as_written_without_a_robots_url() -> None:
    robots = RobotsTxt.parse("Sitemap: /root.xml\nSitemap: here.xml\n")
    assert robots.sitemaps == ["/root.xml", "here.xml"]


def test_empty_sitemap_is_ignored() -> None:
    robots = RobotsTxt.parse("Sitemap:\nSitemap: http://a.com/s.xml\n")
    assert robots.sitemaps == ["http://a.com/s.xml"]


def test_sitemap_misspellings() -> None:
    robots = RobotsTxt.parse("Site-map: http://a.com/1.xml\nSitemaps: http://a.com/2.xml\n")
    assert robots.sitemaps == ["http://a.com/1.xml", "http://a.com/2.xml"]


# Host.


def test_host_first_one_wins() -> None:
    robots = RobotsTxt.parse("Host: first.com\nUser-agent: *\nHost: second.com\n")
    assert robots.host == "first.com"


def test_host_is_file_wide() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /x\nHost: mirror.a.com\nDisallow: /y\n")
    assert robots.host == "mirror.a.com"
    assert not robots.allowed("/y", "bot")  # Host does not end the group


def test_empty_host_is_skipped() -> None:
    assert RobotsTxt.parse("Host:\nHost: a.com\n").host == "a.com"


def test_no_host_is_none() -> None:
    assert RobotsTxt.parse("User-agent: *\nDisallow: /\n").host is None
