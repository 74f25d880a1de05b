"""How far from their age rules are checked against the wait in a download slot's queue.

Rules fresh for longer than the longest wait a slot's queue could hold
(its horizon) are never checked against a slot: the crawl's settings set it,
and each Crawl-delay floor this package gives a slot widens it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest
from scrapy.utils.test import get_crawler

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.pacing.slotwait import OWN_FETCHES, SlotWait

if TYPE_CHECKING:
    from scrapy_robotrules.crawl.fetching.fetches import Fetches


def _slot_wait(settings: dict[str, Any]) -> SlotWait:
    return SlotWait(get_crawler(settings_dict=settings), cast("Fetches", None))


def test_without_delays_no_rules_are_checked_against_a_slot() -> None:
    assert _slot_wait({}).horizon == 0.0


@pytest.mark.filterwarnings("ignore:The RANDOMIZE_DOWNLOAD_DELAY setting is deprecated")
def test_the_horizon_is_a_gap_per_place_the_settings_allow() -> None:
    settings = {"CONCURRENT_REQUESTS": 8, "DOWNLOAD_DELAY": 2.0, "RANDOMIZE_DOWNLOAD_DELAY": False}
    wait = _slot_wait(settings)
    assert wait.gap == 2.0
    assert wait.horizon == (8 + OWN_FETCHES + 1) * 2.0
    jittered = _slot_wait({"CONCURRENT_REQUESTS": 8, "DOWNLOAD_DELAY": 2.0})
    assert jittered.gap == 2.0 * (1 + compat.default_jitter(get_crawler().settings))


@pytest.mark.parametrize(
    ("settings", "gap"),
    [
        ({"AUTOTHROTTLE_ENABLED": True, "AUTOTHROTTLE_MAX_DELAY": 30.0}, 30.0),
        ({"AUTOTHROTTLE_ENABLED": False, "AUTOTHROTTLE_MAX_DELAY": 30.0}, 0.0),
        ({"DOWNLOAD_SLOTS": {"slow.test": {"delay": 5.0, "jitter": 0.2}}}, 5.0 * 1.2),
        ({"DOWNLOAD_SLOTS": {"odd.test": {"delay": "soon"}}}, 0.0),
    ],
    ids=["autothrottle", "autothrottle-off", "download-slots", "unreadable-slot"],
)
def test_autothrottle_and_download_slots_widen_the_gap(
    settings: dict[str, Any], gap: float
) -> None:
    assert _slot_wait({"DOWNLOAD_DELAY_JITTER": 0.0, **settings}).gap >= gap
    if gap == 0.0:
        assert _slot_wait({"DOWNLOAD_DELAY_JITTER": 0.0, **settings}).horizon == 0.0


def test_no_download_limit_means_every_slot_is_looked_at_once_there_is_a_delay() -> None:
    wait = _slot_wait({"CONCURRENT_REQUESTS": 0})
    assert wait.horizon == 0.0
    wait.widen(1.0)
    assert wait.horizon == float("inf")


def test_a_crawl_delay_floor_widens_the_horizon_never_narrows_it() -> None:
    wait = _slot_wait({"CONCURRENT_REQUESTS": 4})
    wait.widen(3.0)
    assert wait.horizon == (4 + OWN_FETCHES + 1) * 3.0
    wait.widen(1.0)
    assert wait.gap == 3.0
