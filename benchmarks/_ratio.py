"""Ours over the built-in, round by round: the ratio's bootstrap interval and what it settles.

``cpu_per_page.py`` compares two variants' medians over rounds on a shared
machine, where one crawl's CPU varies by 5 to 20% and runs of the same code
have put the median ratio on either side of the target. So the verdict
follows the interval, not the one ratio.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

RESAMPLES = 2000
"""Bootstrap resamples of the rounds for the ratio's interval."""


def _ms_per_page(result: dict[str, Any]) -> float | None:
    value: float | None = result["ms_per_page"]
    return value


def paired_rounds(
    results: dict[str, list[dict[str, Any]]],
    mine: str = "ours",
    theirs: str = "builtin",
    figure: Callable[[dict[str, Any]], float | None] = _ms_per_page,
) -> list[tuple[float, float]]:
    """(``mine``'s, ``theirs``') ``figure`` (CPU per page) of each round both have it for."""
    other = {r["round"]: value for r in results[theirs] if (value := figure(r))}
    return [
        (value, other[r["round"]])
        for r in results[mine]
        if (value := figure(r)) and r["round"] in other
    ]


def interval_of(pairs: list[tuple[float, float]]) -> tuple[float, float] | None:
    """A bootstrap 95% interval of ours' median over the built-in's, resampling whole rounds.

    It says how far the ratio of medians could be from the machine's own.
    None for fewer than two rounds.
    """
    if len(pairs) < 2:
        return None
    return _bootstrap(
        pairs,
        lambda sample: (
            statistics.median(mine for mine, _ in sample)
            / statistics.median(theirs for _, theirs in sample)
        ),
    )


def paired_mean(
    pairs: list[tuple[float, float]],
) -> tuple[float, tuple[float, float] | None] | None:
    """The geometric mean of the rounds' own ratios, and its bootstrap 95% interval.

    Each round's two crawls run one after the other, so a drift of the
    machine's load over the run moves both: their ratio cancels most of it,
    which the ratio of medians does not. None without a round; no interval
    for one.
    """
    logs = [math.log(mine / theirs) for mine, theirs in pairs]
    if not logs:
        return None
    mean = math.exp(statistics.fmean(logs))
    if len(logs) < 2:
        return mean, None
    return mean, _bootstrap(logs, lambda sample: math.exp(statistics.fmean(sample)))


def _bootstrap(items: Sequence[T], statistic: Callable[[list[T]], float]) -> tuple[float, float]:
    """The bootstrap 95% interval of ``statistic`` over ``items``, each resampled whole.

    Seeded: one run's data gives one interval.
    """
    draw = random.Random(0)
    values = sorted(statistic(draw.choices(items, k=len(items))) for _ in range(RESAMPLES))
    return values[int(0.025 * RESAMPLES)], values[int(0.975 * RESAMPLES) - 1]


def verdict(interval: tuple[float, float] | None, target: float) -> str:
    """PASS when the whole interval is at most ``target``, FAIL when above it, else not shown."""
    if interval is None:
        return "not shown: one round gives no interval"
    low, high = interval
    if high <= target:
        return "PASS"
    if low > target:
        return "FAIL"
    return f"not shown: its 95% interval holds {target:.2f}"
