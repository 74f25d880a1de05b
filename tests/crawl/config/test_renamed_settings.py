"""A renamed setting's old name keeps working, deprecated (CHANGES.rst, the version policy).

``ROBOTRULES_FOLLOW_SITEMAPS`` is now ``ROBOTRULES_SCHEDULE_SITEMAPS``: set
alone, the old name is read for the new one, and the crawl starts with one
``ScrapyDeprecationWarning`` naming the new one; set beside it, the new name
wins. The old name is known: no unknown-setting WARNING. Real crawls with
either name: tests/crawl/test_sitemaps_crawl.py.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from scrapy.exceptions import ScrapyDeprecationWarning
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from scrapy_robotrules.crawl.config.settings import RobotRulesSettingError, crawl_config
from scrapy_robotrules.crawl.config.table import RENAMED, TABLE, unknown, value

OLD, NEW = "ROBOTRULES_FOLLOW_SITEMAPS", "ROBOTRULES_SCHEDULE_SITEMAPS"


def _deprecations(settings: dict[str, Any]) -> list[str]:
    """The deprecation warnings of starting a crawl with ``settings``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        crawl_config(get_crawler(settings_dict=settings))
    return [str(w.message) for w in caught if issubclass(w.category, ScrapyDeprecationWarning)]


def test_the_old_name_is_read_with_one_warning_naming_the_new_one() -> None:
    assert value(Settings({OLD: True}), NEW) is True
    assert _deprecations({OLD: True}) == [f"The {OLD} setting is deprecated, use {NEW} instead"]


def test_the_new_name_is_read_without_a_warning() -> None:
    assert value(Settings({NEW: True}), NEW) is True
    assert value(Settings({NEW: "false"}), NEW) is False
    assert _deprecations({NEW: True}) == []


@pytest.mark.parametrize(("old", "new"), [(True, False), (False, True)])
def test_the_new_name_wins_when_both_are_set(old: bool, new: bool) -> None:
    assert value(Settings({OLD: old, NEW: new}), NEW) is new
    assert _deprecations({OLD: old, NEW: new}) == [
        f"The {OLD} setting is deprecated, use {NEW} instead (both are set: {NEW} is the one read)"
    ]


def test_neither_name_set_is_the_default() -> None:
    assert value(Settings(), NEW) is TABLE[NEW].default is False
    assert value(Settings({OLD: None}), NEW) is False
    assert _deprecations({OLD: None}) == []


def test_a_bad_value_under_the_old_name_is_named_as_the_old_name() -> None:
    with pytest.raises(RobotRulesSettingError, match=f"^{OLD} must be True or False"):
        value(Settings({OLD: "maybe"}), NEW)


def test_the_old_name_is_not_reported_unknown() -> None:
    assert unknown(Settings({OLD: True})) == []


def test_every_old_name_leads_to_a_setting_of_the_table() -> None:
    assert RENAMED[OLD] == NEW
    assert set(RENAMED.values()) <= set(TABLE)
    assert not set(RENAMED) & set(TABLE)
