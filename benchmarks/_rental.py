"""Many short checks in a row on one hostile file: rent or buy the automaton.

A file whose literals are of one or two lengths answers short paths by
looking their windows up in a dict until that has cost about what building
the automaton would, then builds it (``index.windows``). This times a run
of such checks three ways: as the engine does it, with the dict only (the
way before the rent-or-buy rule), and with the automaton only (built by
the first check, the way before the dict).
"""

from __future__ import annotations

import gc
import random
import string
import time
from collections.abc import Iterator
from contextlib import contextmanager

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots.hostile import windows

WAYS = ("rent or buy", "dict only", "automaton only")
_ALNUM = string.ascii_letters + string.digits


@contextmanager
def way_of(way: str) -> Iterator[None]:
    """The engine made to choose ``way`` (one of :data:`WAYS`) for files parsed within."""
    saved = windows.WINDOWS, windows.BUILD_WINDOWS_PER_CHAR
    if way == "dict only":
        windows.BUILD_WINDOWS_PER_CHAR = 1e9
    elif way == "automaton only":
        windows.WINDOWS = -1
    try:
        yield
    finally:
        windows.WINDOWS, windows.BUILD_WINDOWS_PER_CHAR = saved


def short_checks(body: bytes, count: int, length: int, repeat: int = 3) -> dict[str, float]:
    """Best time, per way, of ``count`` checks of distinct ``length``-character paths on a
    freshly parsed ``body`` (its first check, which reads the rules, included); the ways
    take turns, so that the machine's load weighs on each alike."""
    rnd = random.Random(7)
    paths = ["/" + "".join(rnd.choices(_ALNUM, k=length - 1)) for _ in range(count)]
    best = dict.fromkeys(WAYS, float("inf"))
    for _ in range(repeat):
        for way in WAYS:
            with way_of(way):
                robots = RobotsTxt.parse(body)
                gc.collect()
                started = time.perf_counter()
                for path in paths:
                    robots.allowed(path, "bot")
                best[way] = min(best[way], time.perf_counter() - started)
    return best
