"""The table, ratios and targets of ``crawl.py``'s scenarios.

A crawl stopped at its cap has no exact time to 90%: its wall time is then a
lower bound, and ratios and verdicts say so (``<``, ``>``, "unknown").
"""

from __future__ import annotations

from typing import Any

from benchmarks._common import Row, fmt_bytes, fmt_ratio, fmt_seconds, ratio, render_table
from benchmarks._crawler import VARIANTS
from tests.helpers.docs_tables import record

FLEET = 4
"""The fleet scenario's number (``--scenarios fleet`` or ``4``)."""
SCENARIOS: dict[int, str] = {
    1: "fast robots.txt",
    2: "slow robots.txt (5% 10 s, 2% never)",
    3: "30% disallowed",
    FLEET: "fleet",
}


def fmt_t90(r: dict[str, Any]) -> str:
    if r["t90"] is None:
        return f"> {r['wall']:.1f} s"
    return fmt_seconds(r["t90"])


def t90_bound(r: dict[str, Any] | None) -> tuple[float, bool] | None:
    """(time to 90%, exact?) where a missing 90% mark is a lower bound (the wall time)."""
    if r is None:
        return None
    if r["t90"] is None:
        return r["wall"], False
    return r["t90"], True


def fmt_bound_ratio(num: tuple[float, bool] | None, den: tuple[float, bool] | None) -> str:
    if num is None or den is None or den[0] == 0:
        return "n/a"
    value = num[0] / den[0]
    if num[1] and den[1]:
        return fmt_ratio(value)
    if num[1] and not den[1]:
        return "< " + fmt_ratio(value)
    if den[1] and not num[1]:
        return "> " + fmt_ratio(value)
    return "?"


def verdict_at_most(
    num: tuple[float, bool] | None, den: tuple[float, bool] | None, limit: float
) -> str:
    """PASS/FAIL for num/den <= limit; bounds give a verdict only when they settle it."""
    if num is None or den is None or den[0] == 0:
        return "n/a"
    value = num[0] / den[0]
    if num[1] and den[1]:
        return "PASS" if value <= limit else "FAIL"
    if not num[1] and den[1]:  # true ratio is larger than value
        return "FAIL" if value > limit else "unknown (capped)"
    if num[1] and not den[1]:  # true ratio is smaller than value
        return "PASS" if value <= limit else "unknown (capped)"
    return "unknown (capped)"


def verdict_at_least(
    num: tuple[float, bool] | None, den: tuple[float, bool] | None, limit: float
) -> str:
    if num is None or den is None or den[0] == 0:
        return "n/a"
    value = num[0] / den[0]
    if num[1] and den[1]:
        return "PASS" if value >= limit else "FAIL"
    if num[1] and not den[1]:  # true ratio is smaller than value
        return "FAIL" if value < limit else "unknown (capped)"
    if not num[1] and den[1]:  # true ratio is larger than value
        return "PASS" if value >= limit else "unknown (capped)"
    return "unknown (capped)"


def render_crawls(results: dict[int, dict[str, dict[str, Any] | None]]) -> str:
    """The table of every crawl, then the ratios."""
    headers = ["scenario / variant", "wall", "to 90%", "pages", "pages/s", "peak RSS"]
    headers += ["forbidden", "dropped", "robots req"]
    rows: list[Row] = []
    ratio_rows: list[Row] = []
    for scenario, by_variant in results.items():
        rows.append(None)
        rows.append([f"{scenario}. {SCENARIOS[scenario]}", "", "", "", "", "", "", "", ""])
        for variant in VARIANTS:
            r = by_variant[variant]
            if r is None:
                rows.append([f"  {variant}", "failed", "", "", "", "", "", "", ""])
                continue
            rows.append(
                [
                    f"  {variant}",
                    fmt_seconds(r["wall"]) + (" (capped)" if r["capped"] else ""),
                    fmt_t90(r),
                    f"{r['pages']:,}/{r['expected_pages']:,}",
                    f"{r['pages_per_second']:.0f}",
                    fmt_bytes(r["max_rss"]),
                    f"{r['forbidden']:,}",
                    f"{r['dropped']:,}" if variant == "ours" else "-",
                    f"{r['robots_requests']:,}",
                ]
            )
        ours, builtin, free = (by_variant[v] for v in ("ours", "builtin", "obey-false"))
        wall = ratio(ours["wall"], free["wall"]) if ours is not None and free is not None else None
        ratio_rows.append(
            [
                f"{scenario}. {SCENARIOS[scenario]}",
                fmt_ratio(wall),
                fmt_bound_ratio(t90_bound(ours), t90_bound(free)),
                fmt_bound_ratio(t90_bound(builtin), t90_bound(ours)),
            ]
        )
    ratio_headers = ["ratios", "ours/obey-false wall", "ours/obey-false to 90%"]
    record("crawl", headers, rows[1:])
    record("crawl-ratios", [*ratio_headers, "builtin/ours to 90%"], ratio_rows)
    return "\n".join(
        [
            render_table(headers, rows[1:]),
            "pages: crawled / expected by design; to 90%: of the pages crawled "
            "(of the expected ones when capped)",
            "",
            render_table([*ratio_headers, "builtin/ours to 90%"], ratio_rows),
        ]
    )


def crawl_targets(results: dict[int, dict[str, dict[str, Any] | None]]) -> list[dict[str, str]]:
    targets: list[dict[str, str]] = []
    if 1 in results:
        ours, free = results[1]["ours"], results[1]["obey-false"]
        num = (ours["wall"], not ours["capped"]) if ours is not None else None
        den = (free["wall"], not free["capped"]) if free is not None else None
        targets.append(
            {
                "target": "1. ours wall time <= 1.10 x obey-false",
                "value": fmt_bound_ratio(num, den),
                "verdict": verdict_at_most(num, den, 1.10),
            }
        )
    if 2 in results:
        mine, theirs, floor = (t90_bound(results[2][v]) for v in ("ours", "builtin", "obey-false"))
        targets.append(
            {
                "target": "2. builtin to 90% >= 2.5 x ours",
                "value": fmt_bound_ratio(theirs, mine),
                "verdict": verdict_at_least(theirs, mine, 2.5),
            }
        )
        targets.append(
            {
                "target": "2. ours to 90% <= 1.25 x obey-false",
                "value": fmt_bound_ratio(mine, floor),
                "verdict": verdict_at_most(mine, floor, 1.25),
            }
        )
    return targets
