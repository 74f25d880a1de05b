"""Reading cProfile's statistics of two crawls: the package's hot spots, and what ours calls more.

``cpu_per_page.py --profile FILE`` uses it. Profiled crawls run several
times slower than plain ones, and not evenly (every Python call pays), so
these say where to look, not how much a part costs: ``--attribute``
(``_sampling.py``) says that.
"""

from __future__ import annotations

import pstats
from collections.abc import Sequence
from typing import Any

PACKAGE = "scrapy_robotrules"


def hot_spots(path: str, top: int) -> tuple[float, float, list[Sequence[str]]]:
    """(profile's total time, time of the package's own code, top rows by own time)."""
    stats: Any = pstats.Stats(path)
    total = float(stats.total_tt)
    own = 0.0
    rows: list[tuple[float, Sequence[str]]] = []
    for (filename, line, function), (_, calls, tottime, cumtime, _) in stats.stats.items():
        position = filename.replace("\\", "/").rfind(f"/{PACKAGE}/")
        if position < 0:
            continue
        own += tottime
        where = _where(filename, line, function)
        rows.append(
            (tottime, [where, f"{calls:,}", f"{tottime * 1e3:.0f}", f"{cumtime * 1e3:.0f}"])
        )
    rows.sort(key=lambda row: row[0], reverse=True)
    return total, own, [row for _, row in rows[:top]]


def _where(filename: str, line: int, function: str) -> str:
    """A profile entry's place without the machine's directories."""
    path = filename.replace("\\", "/")
    for marker in (f"/{PACKAGE}/", "/site-packages/", "/lib/python"):
        position = path.rfind(marker)
        if position >= 0:
            path = path[position + 1 :]
            break
    return f"{path}:{line} {function}"


def extra_calls(ours: str, builtin: str, top: int) -> list[Sequence[str]]:
    """Python functions (of any code) called most often more with ours than with the built-in."""
    mine: Any = pstats.Stats(ours)
    theirs: Any = pstats.Stats(builtin)
    rows: list[tuple[int, Sequence[str]]] = []
    for key, (_, calls, tottime, _, _) in mine.stats.items():
        _, before, their_tt, _, _ = theirs.stats.get(key, (0, 0, 0.0, 0.0, {}))
        if calls > before and key[0] != "~":  # "~": built-in functions
            where = _where(*key)
            cells = [where, f"{calls:,}", f"{before:,}", f"{(tottime - their_tt) * 1e3:+.0f}"]
            rows.append((calls - before, cells))
    rows.sort(key=lambda row: row[0], reverse=True)
    return [row for _, row in rows[:top]]
