"""The fleet scenario's table and targets (``fleet.py``, ``crawl.py --scenarios fleet``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from benchmarks._common import Row, fmt_ratio, fmt_seconds, ratio, render_table
from tests.helpers.docs_tables import record

FLEET_VARIANTS = ("memory", "redis")


def summarise_round(
    variant: str,
    sites: int,
    pages: int,
    workers: int,
    *,
    answers: list[dict[str, Any]],
    served: dict[str, Any],
    span: float,
) -> dict[str, Any]:
    """One round's figures from the crawlers' answers and what the server served."""

    def total(key: str) -> int:
        return sum(int(a["stats"].get(key, 0)) for a in answers)

    opened = min(a["opened"] for a in answers)
    closed = max(a["closed"] for a in answers)
    wall = closed - opened
    crawled = sum(int(a["pages"]) for a in answers)
    return {
        "variant": variant,
        "store": "redis" if variant == "redis" else "memory",
        "sites": sites,
        "pages_per_site": pages,
        "workers": workers,
        "robots_served": served["robots_requests"],
        "origins_fetched": served["origins_fetched"],
        "most_fetches_per_origin": served["most_fetches_per_origin"],
        "pages_served": served["page_requests"],
        "request_count": total("robotrules/request_count"),
        "store_hits": total("robotrules/store/hits"),
        "store_misses": total("robotrules/store/misses"),
        "store_errors": total("robotrules/store/errors"),
        "fleet_waited": total("robotrules/fleet/waited"),
        "fleet_paced": total("robotrules/fleet/paced"),
        "download_errors": total("downloader/exception_count"),
        "pages": crawled,
        "expected_pages": sites * pages,
        "wall": wall,
        "span": span,
        "pages_per_second": crawled / wall if wall > 0 else 0.0,
        "capped": any(a["capped"] for a in answers),
        "max_rss": max(int(a["max_rss"]) for a in answers),
        "crawlers": answers,
    }


def median_round(rounds: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The round with the median pages per second (the upper one of an even count)."""
    if not rounds:
        return None
    ordered = sorted(rounds, key=lambda r: r["pages_per_second"])
    return ordered[len(ordered) // 2]


def render_fleet(fleet: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> str:
    """The fleet table: each variant's median round, then redis / memory."""
    headers = [
        f"fleet ({args.workers} crawlers)",
        "robots.txt served",
        "request_count",
        "hits",
        "waited",
        "errors",
        "pages",
        "wall",
        "pages/s (range)",
        "robots.txt/origin",
        "round trips/page",
    ]
    rows: list[Row] = []
    chosen: dict[str, dict[str, Any] | None] = {}
    for variant in FLEET_VARIANTS:
        rounds = fleet[variant]
        r = median_round(rounds)
        chosen[variant] = r
        if r is None:
            rows.append([variant, "failed", *[""] * (len(headers) - 2)])
            continue
        speeds = [x["pages_per_second"] for x in rounds]
        rows.append(
            [
                variant,
                f"{r['robots_served']:,}",
                f"{r['request_count']:,}",
                f"{r['store_hits']:,}",
                f"{r['fleet_waited']:,}",
                f"{r['store_errors']:,}",
                f"{r['pages']:,}/{r['expected_pages']:,}",
                fmt_seconds(r["wall"]) + (" (capped)" if r["capped"] else ""),
                f"{r['pages_per_second']:.0f} ({min(speeds):.0f}-{max(speeds):.0f})",
                f"{r['robots_served'] / r['sites']:.2f}",
                _round_trips(r),
            ]
        )
    mem, red = chosen["memory"], chosen["redis"]
    if mem is not None and red is not None:
        rows.append(None)
        rows.append(
            [
                "redis / memory",
                fmt_ratio(ratio(red["robots_served"], mem["robots_served"])),
                fmt_ratio(ratio(red["request_count"], mem["request_count"])),
                "",
                "",
                "",
                "",
                fmt_ratio(ratio(red["wall"], mem["wall"])),
                fmt_ratio(ratio(red["pages_per_second"], mem["pages_per_second"])),
                "",
                "",
            ]
        )
    record("fleet", headers, rows)
    count = max(len(fleet["memory"]), len(fleet["redis"]))
    median = (
        "One round per variant."
        if count == 1
        else f"Each variant: the median of {count} rounds by pages/s (range: all rounds)."
    )
    return "\n".join(
        [
            render_table(headers, rows),
            f"{args.fleet_sites:,} sites x {args.pages} pages; each crawler crawls its share "
            f"(1/{args.workers}) of every site's pages.",
            median,
            "robots.txt served: robots.txt requests the sites server answered; request_count,",
            "hits, waited, errors: robotrules/request_count, store/hits, fleet/waited and",
            "store/errors summed over the crawlers; wall: first spider opened to last closed;",
            "pages/s: the fleet's pages / wall; robots.txt/origin: robots.txt served / sites;",
            "round trips/page: commands the store's masters served the crawlers / pages.",
            *_failover_lines(chosen.get("redis")),
        ]
    )


def _round_trips(r: dict[str, Any]) -> str:
    trips = r.get("round_trips")
    if trips is None or not r["pages"]:
        return "n/a" if r["variant"] == "redis" else ""
    return f"{trips / r['pages']:.2f}"


def _failover_lines(r: dict[str, Any] | None) -> list[str]:
    """What the failover cost: robots.txt fetched again, fallbacks, WARNING lines."""
    if r is None or not r.get("failed_over"):
        return []
    return [
        f"Failover ({r['topology']}: a master killed mid-crawl, a replica took over):"
        f" {r['robots_served'] - r['sites']:,} robots.txt fetched again,"
        f" at most {r['most_fetches_per_origin']} per origin;"
        f" {r['store_errors']:,} store errors; {r['failover_warnings']} 'failed over' and"
        f" {r['fallback_warnings']} 'in-process memory store' WARNING lines.",
    ]


def fleet_targets(
    fleet: dict[str, list[dict[str, Any]]], args: argparse.Namespace
) -> list[dict[str, str]]:
    """Each robots.txt fetched once per fleet with Redis, once per crawler with memory."""
    targets = []
    for variant, per_origin in (("redis", 1), ("memory", args.workers)):
        rounds = fleet[variant]
        want = per_origin * args.fleet_sites
        served = sorted({r["robots_served"] for r in rounds})
        ok = bool(rounds) and all(
            r["robots_served"] == want
            and r["origins_fetched"] == args.fleet_sites
            and r["most_fetches_per_origin"] == per_origin
            for r in rounds
        )
        targets.append(
            {
                "target": f"fleet: {variant} fetches each robots.txt {per_origin}x "
                f"({want:,} in all)",
                "value": ", ".join(f"{s:,}" for s in served) or "n/a",
                "verdict": ("PASS" if ok else "FAIL") if rounds else "n/a",
            }
        )
    return targets
