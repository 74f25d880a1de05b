"""SPEC 8: what a robots.txt fetch means (status -> outcome), how long it stays fresh, back-off."""

from __future__ import annotations

import datetime as dt
from email.utils import format_datetime

import pytest

from scrapy_robotrules.engine.robots.fetch_outcomes import (
    DEFAULT_MAX_AGE,
    DEFAULT_MIN_AGE,
    MAX_REDIRECTS,
    Outcome,
    freshness_lifetime,
    outcome_for_status,
    retry_delay,
)

NOW = dt.datetime(2030, 1, 1, 12, 0, tzinfo=dt.timezone.utc)


def http_date(moment: dt.datetime) -> str:
    return format_datetime(moment, usegmt=True)


def lifetime(headers: dict[str, str], **kwargs: float) -> float:
    return freshness_lifetime(headers, now=NOW.timestamp(), **kwargs)


# Status -> outcome.


@pytest.mark.parametrize("status", [200, 204, 206, 299])
def test_2xx_means_the_file_rules(status: int) -> None:
    assert outcome_for_status(status) is Outcome.RULES


@pytest.mark.parametrize("status", [300, 301, 302, 307, 308, 399])
def test_3xx_left_after_following_redirects_means_allow_all(status: int) -> None:
    # More than MAX_REDIRECTS hops: treated as 404 (SPEC 8).
    assert outcome_for_status(status) is Outcome.ALLOW_ALL


def test_redirect_limit_is_five() -> None:
    assert MAX_REDIRECTS == 5


@pytest.mark.parametrize("status", [400, 404, 410, 451, 499])
def test_client_errors_mean_no_robots_txt_so_allow_all(status: int) -> None:
    assert outcome_for_status(status) is Outcome.ALLOW_ALL


@pytest.mark.parametrize("status", [400, 404, 410])
def test_unauthorized_setting_does_not_touch_other_client_errors(status: int) -> None:
    assert outcome_for_status(status, unauthorized="disallow") is Outcome.ALLOW_ALL


@pytest.mark.parametrize("status", [401, 403])
def test_401_and_403_allow_all_by_default(status: int) -> None:
    assert outcome_for_status(status) is Outcome.ALLOW_ALL
    assert outcome_for_status(status, unauthorized="allow") is Outcome.ALLOW_ALL


@pytest.mark.parametrize("status", [401, 403])
def test_401_and_403_disallow_all_when_asked(status: int) -> None:
    assert outcome_for_status(status, unauthorized="disallow") is Outcome.DISALLOW_ALL


def test_429_is_unreachable_not_a_client_error() -> None:
    assert outcome_for_status(429) is Outcome.UNREACHABLE
    assert outcome_for_status(429, unauthorized="disallow") is Outcome.UNREACHABLE


@pytest.mark.parametrize("status", [500, 502, 503, 504, 599])
def test_5xx_is_unreachable(status: int) -> None:
    assert outcome_for_status(status) is Outcome.UNREACHABLE


@pytest.mark.parametrize("status", [0, 100, 199, 600, 999, -1])
def test_statuses_that_are_no_http_answer_are_unreachable(status: int) -> None:
    # Never "allow all" for something the crawler cannot read.
    assert outcome_for_status(status) is Outcome.UNREACHABLE


@pytest.mark.parametrize("value", ["deny", "Disallow", "", "block"])
def test_invalid_unauthorized_raises_naming_the_choices(value: str) -> None:
    with pytest.raises(ValueError, match="unauthorized") as info:
        outcome_for_status(200, unauthorized=value)
    assert "'allow'" in str(info.value)
    assert "'disallow'" in str(info.value)


def test_outcome_prints_as_its_value() -> None:
    assert str(Outcome.UNREACHABLE) == "unreachable"
    assert str(Outcome.ALLOW_ALL) == "allow-all"


# Freshness.


def test_no_caching_headers_means_24_hours() -> None:
    assert DEFAULT_MAX_AGE == 24 * 3600
    assert lifetime({}) == DEFAULT_MAX_AGE
    assert lifetime({"Content-Type": "text/plain"}) == DEFAULT_MAX_AGE


def test_max_age_is_honoured() -> None:
    assert lifetime({"Cache-Control": "max-age=3600"}) == 3600


def test_max_age_among_other_directives() -> None:
    assert lifetime({"Cache-Control": "public, max-age=1800, must-revalidate"}) == 1800


def test_s_maxage_is_honoured() -> None:
    assert lifetime({"Cache-Control": "s-maxage=1200"}) == 1200


@pytest.mark.parametrize("value", ["no-cache", "no-store", "max-age=3600, no-cache", "NO-STORE"])
def test_no_cache_and_no_store_give_the_floor(value: str) -> None:
    assert lifetime({"Cache-Control": value}) == DEFAULT_MIN_AGE


def test_max_age_zero_gives_the_floor_not_zero() -> None:
    # Otherwise every request would fetch robots.txt again.
    assert DEFAULT_MIN_AGE > 0
    assert lifetime({"Cache-Control": "max-age=0"}) == DEFAULT_MIN_AGE


def test_floor_is_a_setting() -> None:
    assert lifetime({"Cache-Control": "max-age=0"}, min_age=5) == 5
    assert lifetime({"Cache-Control": "max-age=10"}, min_age=30) == 30


def test_max_age_beyond_24_hours_is_capped() -> None:
    assert lifetime({"Cache-Control": "max-age=604800"}) == DEFAULT_MAX_AGE


def test_cap_is_a_setting() -> None:
    assert lifetime({"Cache-Control": "max-age=7200"}, max_age=3600) == 3600
    assert lifetime({}, max_age=3600) == 3600


def test_expires_against_date() -> None:
    headers = {
        "Date": http_date(NOW - dt.timedelta(hours=5)),
        "Expires": http_date(NOW - dt.timedelta(hours=3)),
    }
    # Expires - Date, not Expires - now: the server's clock is the reference.
    assert lifetime(headers) == 2 * 3600


def test_expires_without_date_counts_from_now() -> None:
    assert lifetime({"Expires": http_date(NOW + dt.timedelta(minutes=30))}) == 1800


def test_expires_in_the_past_gives_the_floor() -> None:
    assert lifetime({"Expires": http_date(NOW - dt.timedelta(days=1))}) == DEFAULT_MIN_AGE


def test_expires_beyond_24_hours_is_capped() -> None:
    assert lifetime({"Expires": http_date(NOW + dt.timedelta(days=30))}) == DEFAULT_MAX_AGE


@pytest.mark.parametrize("value", ["0", "-1", "garbage", "", "Thu, 99 Foo 2030 99:99:99 GMT"])
def test_invalid_expires_means_already_expired(value: str) -> None:
    # RFC 9111 §5.3: not a date -> expired; so the floor, not the 24-hour default.
    assert lifetime({"Expires": value}) == DEFAULT_MIN_AGE


def test_max_age_wins_over_expires() -> None:
    headers = {
        "Cache-Control": "max-age=600",
        "Expires": http_date(NOW + dt.timedelta(hours=2)),
    }
    assert lifetime(headers) == 600


@pytest.mark.parametrize("value", ["max-age=abc", "max-age=", "max-age=1e3", "bogus", ""])
def test_invalid_cache_control_is_ignored(value: str) -> None:
    assert lifetime({"Cache-Control": value}) == DEFAULT_MAX_AGE


def test_invalid_cache_control_falls_back_to_expires() -> None:
    headers = {
        "Cache-Control": "max-age=soon",
        "Expires": http_date(NOW + dt.timedelta(hours=1)),
    }
    assert lifetime(headers) == 3600


def test_header_names_are_case_insensitive() -> None:
    assert lifetime({"cache-control": "max-age=900"}) == 900
    assert lifetime({"CACHE-CONTROL": "max-age=900"}) == 900
    assert lifetime({"eXpIrEs": http_date(NOW + dt.timedelta(minutes=15))}) == 900
    headers = {
        "DATE": http_date(NOW - dt.timedelta(hours=2)),
        "expires": http_date(NOW - dt.timedelta(hours=1)),
    }
    assert lifetime(headers) == 3600


def test_directive_names_are_case_insensitive() -> None:
    assert lifetime({"Cache-Control": "Max-Age=900"}) == 900


def test_age_is_subtracted() -> None:
    assert lifetime({"Cache-Control": "max-age=3600", "Age": "600"}) == 3000
    assert lifetime({"cache-control": "max-age=3600", "age": "600"}) == 3000


def test_age_beyond_max_age_gives_the_floor() -> None:
    assert lifetime({"Cache-Control": "max-age=300", "Age": "1000"}) == DEFAULT_MIN_AGE


def test_unreadable_age_is_ignored() -> None:
    assert lifetime({"Cache-Control": "max-age=3600", "Age": "ten"}) == 3600


# Back-off for an unreachable robots.txt.


def test_retry_delay_starts_at_five_seconds() -> None:
    assert retry_delay(1) == 5


def test_retry_delay_doubles() -> None:
    assert [retry_delay(n) for n in range(1, 8)] == [5, 10, 20, 40, 80, 160, 320]


def test_retry_delay_is_capped_at_ten_minutes() -> None:
    assert retry_delay(8) == 600
    assert retry_delay(9) == 600
    assert retry_delay(10_000) == 600


def test_retry_delay_never_below_the_base() -> None:
    assert retry_delay(0) == 5
    assert retry_delay(-3) == 5


def test_retry_delay_base_and_cap_are_settings() -> None:
    assert retry_delay(3, base=1) == 4
    assert retry_delay(20, base=1, cap=30) == 30
