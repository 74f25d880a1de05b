"""Benchmark the robots.txt engine against Protego and urllib.robotparser.

Usage::

    python -m benchmarks.engine [--quick] [--files N] [--repeat R] [--budget S]
                                [--no-pathological] [--json PATH] [--check]

Measures three tools side by side, in one run: ours
(``scrapy_robotrules.RobotsTxt``), Protego, and ``urllib.robotparser``.

1. parse: time to parse every file of ``corpus/robots/`` (the files are read
   into memory first, untimed);
2. checks: time to check every URL of ``corpus/urls.tsv`` with the agents
   ``examplebot`` and ``Googlebot`` (two calls per URL) against the parsed
   object of the URL's own file. Each run checks freshly parsed objects, so
   anything a tool builds lazily on the first check is paid for; the same
   objects are then checked a second time ("warm", for information);
3. memory: tracemalloc's current traced size once every file is parsed, and
   again after the checks of 2, each tool alone in a fresh subprocess. The
   input bytes are copied inside the traced region, so a tool that keeps its
   input is charged for it;
4. pathological: time per check of ``Disallow: /*a*a*a*a*a*a*a*a*a*a*a*a*b``
   (under ``User-agent: *``) against a path of N ``a``, each tool in a
   subprocess with a time budget (``--budget``; reported as "> budget" if
   exceeded), and, for ours, the same as the number of ``*`` grows.

Each tool gets its input in its natural form: ours parses bytes; Protego and
urllib parse text decoded the way Scrapy decodes it for Protego,
``body.decode("utf-8-sig", errors="ignore")``, and that decoding is timed as
part of their parsing (urllib is given the text's lines). Times are the best of
``--repeat`` runs of ``time.perf_counter``; within a run the tools take turns,
so drift on a shared machine hits all of them. The garbage collector runs
before each timed section and stays enabled during it (collections a tool
causes are part of its cost). Ratios are ours/Protego, and the targets are:
parse <= 0.25, checks <= 0.33, memory <= 0.30, and parse plus fresh
checks <= 0.35 (the sum of one run's two times, best run) and memory held after
the checks <= 0.40.

An exception raised by a tool on a file (or on a check) is counted and
reported, not fatal. ``--quick`` is a smoke run on an evenly spread subset of
300 files with a 5 s budget; ``--check`` makes the exit status 1 unless ours
was measured and every target passed. The tools are in ``_engine_tools.py``;
the memory and pathological measures, each in a fresh process, in
``_engine_workers.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import (
    Corpus,
    CorpusNotFoundError,
    Row,
    distribution_version,
    environment,
    fmt_bytes,
    fmt_ratio,
    fmt_seconds,
    load_corpus,
    progress,
    ratio,
    render_table,
)
from benchmarks._engine_tools import (
    AGENTS,
    TOOL_ORDER,
    Tool,
    ToolStats,
    describe_ours,
    load_tool,
    time_tools,
)
from benchmarks._engine_workers import (
    DEFAULT_BUDGET,
    PATHOLOGICAL_NS,
    PATHOLOGICAL_STARS,
    STAR_SWEEP,
    STAR_SWEEP_N,
    case_cell,
    case_ratio,
    measure_memory,
    measure_pathological,
    pathological_rule,
)
from tests.helpers.docs_tables import record, recorded, write_recorded

TARGETS = {
    "parse": 0.25,
    "checks": 0.33,
    "memory": 0.30,
    # A file parsed and every URL of it checked, and what is held then.
    "parse_and_checks": 0.35,
    "memory_after_checks": 0.40,
}
QUICK_FILES = 300
QUICK_BUDGET = 5.0


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def target_status(value: float | None, target: float) -> str:
    if value is None:
        return "n/a"
    return "PASS" if value <= target else "FAIL"


def build_report(
    stats: dict[str, ToolStats],
    corpus: Corpus,
    repeat: int,
    cases: list[dict[str, Any]],
    sweep: list[dict[str, Any]],
) -> tuple[str, dict[str, Any]]:
    ours = stats.get("ours")
    protego = stats["protego"]
    columns = [stats.get(key) for key in TOOL_ORDER]

    def values(get: Callable[[ToolStats], Any], fmt: Callable[[Any], str]) -> list[str]:
        return [fmt(get(st)) if st is not None else "n/a" for st in columns]

    def ours_ratio(get: Callable[[ToolStats], float | None]) -> float | None:
        return ratio(get(ours), get(protego)) if ours is not None else None

    ratios = {
        "parse": ours_ratio(lambda s: s.parse_s),
        "checks": ours_ratio(lambda s: s.checks_fresh_s),
        "checks_warm": ours_ratio(lambda s: s.checks_warm_s),
        "memory": ours_ratio(lambda s: s.memory_parsed),
        "memory_after_checks": ours_ratio(lambda s: s.memory_after_checks),
        "parse_and_checks": ours_ratio(lambda s: s.parse_and_checks_s),
    }
    targets: dict[str, dict[str, Any]] = {
        name: {
            "target": limit,
            "ratio": ratios[name],
            "status": target_status(ratios[name], limit),
        }
        for name, limit in TARGETS.items()
    }

    nfiles = len(corpus.files)
    nchecks = protego.checks_made
    best = f"best of {repeat}"
    headers = ["", "ours", "Protego", "urllib", "ours/protego", "target", "status"]

    def target_cells(name: str) -> list[str]:
        t = targets[name]
        return [fmt_ratio(t["ratio"]), f"<= {t['target']:.2f}", str(t["status"])]

    def count(get: Callable[[ToolStats], int]) -> list[str]:
        return values(get, lambda v: f"{v:,}")

    def row(label: str, cells: list[str], tail: list[str] | None = None) -> list[str]:
        return [label, *cells, *(tail if tail is not None else ["", "", ""])]

    rows: list[Row] = [
        row(
            f"parse {nfiles:,} files ({best})",
            values(lambda s: s.parse_s, fmt_seconds),
            target_cells("parse"),
        ),
        row(
            f"{nchecks:,} checks, fresh objects ({best})",
            values(lambda s: s.checks_fresh_s, fmt_seconds),
            target_cells("checks"),
        ),
        row("  per check", values(lambda s: s.per_check_s, fmt_seconds)),
        row(
            f"{nchecks:,} checks, warm objects (info)",
            values(lambda s: s.checks_warm_s, fmt_seconds),
            [fmt_ratio(ratios["checks_warm"]), "", ""],
        ),
        row(
            "memory held, all files parsed",
            values(lambda s: s.memory_parsed, fmt_bytes),
            target_cells("memory"),
        ),
        row(
            f"parse + fresh checks ({best} runs)",
            values(lambda s: s.parse_and_checks_s, fmt_seconds),
            target_cells("parse_and_checks"),
        ),
        row(
            "memory held, after the checks",
            values(lambda s: s.memory_after_checks, fmt_bytes),
            target_cells("memory_after_checks"),
        ),
        None,
        row("files that raised on parse", count(lambda s: s.parse_raised)),
        row("checks made", count(lambda s: s.checks_made)),
        row("checks that raised", count(lambda s: s.checks_raised)),
        row("checks answered 'allowed'", count(lambda s: s.checks_allowed)),
    ]
    out = [render_table(headers, rows)]
    record("engine", headers, rows[: rows.index(None)])

    notes = []
    for st in columns:
        if st is None:
            continue
        if st.parse_raised:
            notes.append(f"{st.label}: {st.parse_raised} files raised, e.g. {st.parse_errors[0]}")
        if st.checks_unstable:
            notes.append(f"{st.label}: check results differed between runs")
        if st.memory_error:
            notes.append(f"{st.label}: memory measurement failed: {st.memory_error}")
    if len({st.checks_made for st in columns if st is not None}) > 1:
        notes.append(
            "the tools made different numbers of checks (URLs of a file that raised on parse "
            "are not checked): the check times compare unequal workloads"
        )
    if ours is None:
        notes.append("ours not available: targets not evaluated")
    else:
        evaluated = [t["status"] for t in targets.values()]
        passed = evaluated.count("PASS")
        notes.append(f"targets: {passed}/{len(evaluated)} PASS")
    out.append("\n".join(notes))

    if cases:
        by_key = {(c["tool"], c["n"], c["stars"]): c for c in cases}
        rule = pathological_rule(PATHOLOGICAL_STARS)
        prow: list[Row] = []
        for n in PATHOLOGICAL_NS:
            cells = [by_key.get((key, n, PATHOLOGICAL_STARS)) for key in TOOL_ORDER]
            prow.append(
                [f"N = {n:,}", *[case_cell(c) for c in cells], case_ratio(cells[0], cells[1])]
            )
        title = f"Pathological rule 'Disallow: {rule}', path of N 'a': time per check"
        table = render_table(["", "ours", "Protego", "urllib", "ours/protego"], prow)
        record("engine-pathological", ["", "ours", "Protego", "urllib", "ours/protego"], prow)
        out.append(f"{title}\n{table}")
        for case in cases:
            if "error" in case:
                out.append(f"  {case['tool']} N={case['n']:,}: error: {case['error']}")
            elif case.get("allowed") is False:
                out.append(f"  {case['tool']} N={case['n']:,}: answered 'disallowed' (wrong)")
    if sweep:
        base = sweep[0].get("per_check_s")
        srow: list[Row] = []
        problems: list[str] = []
        for case in sweep:
            value = case.get("per_check_s")
            rel = fmt_ratio(ratio(value, base)) if value is not None else "n/a"
            srow.append([f"{case['stars']} stars", case_cell(case), rel])
            if "error" in case:
                problems.append(f"  {case['stars']} stars: error: {case['error']}")
            elif case.get("allowed") is False:
                problems.append(f"  {case['stars']} stars: answered 'disallowed' (wrong)")
        title = f"ours, path of {STAR_SWEEP_N:,} 'a', rule '/*a…*a*b': time per check"
        table = render_table(["", "per check", f"vs {STAR_SWEEP[0]} stars"], srow)
        out.append("\n".join([title, table, *problems]))

    data = {
        "tools": {key: st.as_json() for key, st in stats.items()},
        "ratios_ours_over_protego": ratios,
        "targets": targets,
        "pathological": {
            "rule": f"Disallow: {pathological_rule(PATHOLOGICAL_STARS)}",
            "cases": cases,
            "ours_star_sweep": sweep,
        },
    }
    return "\n\n".join(out), data


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark scrapy_robotrules against Protego and urllib.robotparser.",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {QUICK_FILES} files (unless --files) and a "
        f"{QUICK_BUDGET:g} s budget (unless --budget)",
    )
    parser.add_argument(
        "--files", type=int, metavar="N", help="use N files spread over the corpus (default: all)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, metavar="R", help="timed runs, best is kept (default: 3)"
    )
    parser.add_argument(
        "--budget",
        type=float,
        metavar="S",
        help=f"time budget per pathological case, in seconds (default: {DEFAULT_BUDGET:g})",
    )
    parser.add_argument(
        "--no-pathological", action="store_true", help="skip the pathological-pattern checks"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="write the result tables into docs/benchmarks.rst, between their markers",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit with status 1 unless ours is available and every target passes",
    )
    args = parser.parse_args(argv)
    if args.files is None and args.quick:
        args.files = QUICK_FILES
    if args.budget is None:
        args.budget = QUICK_BUDGET if args.quick else DEFAULT_BUDGET
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.files is not None and args.files < 1:
        parser.error("--files must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)

    tools: list[Tool[Any]] = []
    ours_problem = None
    try:
        tools.append(load_tool("ours"))
    except Exception as exc:
        ours_problem = f"{type(exc).__name__}: {exc}"
    try:
        tools.append(load_tool("protego"))
    except ImportError as exc:
        print(f"error: Protego is required for this benchmark ({exc})", file=sys.stderr)
        return 2
    tools.append(load_tool("urllib"))

    try:
        corpus = load_corpus(args.files)
    except CorpusNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    env = environment()
    ours_desc = describe_ours() if ours_problem is None else f"not available ({ours_problem})"
    nchecks = len(corpus.urls) * len(AGENTS)
    header = [
        "scrapy-robotrules engine benchmark" + (" (--quick)" if args.quick else ""),
        f"Python:   {env['python']}",
        f"Protego:  {distribution_version('protego') or 'unknown'}",
        f"Platform: {env['platform']} ({env['cpus']} CPUs)",
        f"ours:     {ours_desc}",
        f"corpus:   {len(corpus.files):,} of {corpus.total_files:,} files "
        f"({fmt_bytes(corpus.total_bytes)}), {len(corpus.urls):,} URLs x {len(AGENTS)} agents "
        f"({', '.join(AGENTS)}) = {nchecks:,} checks per tool",
        f"          from {corpus.source}",
    ]
    print("\n".join(header), flush=True)
    if ours_problem is not None:
        progress(f"warning: ours not available, measuring Protego and urllib only: {ours_problem}")

    stats = time_tools(tools, corpus, args.repeat)
    measure_memory(tools, stats, args.files)
    cases: list[dict[str, Any]] = []
    sweep: list[dict[str, Any]] = []
    if not args.no_pathological:
        cases, sweep = measure_pathological(tools, args.budget)

    report, data = build_report(stats, corpus, args.repeat, cases, sweep)
    print()
    print(report)

    if args.json:
        data = {
            "environment": {
                **env,
                "protego": distribution_version("protego"),
                "ours": ours_desc,
            },
            "config": {
                "quick": args.quick,
                "files": len(corpus.files),
                "corpus_files": corpus.total_files,
                "corpus_source": corpus.source,
                "corpus_bytes": corpus.total_bytes,
                "urls": len(corpus.urls),
                "agents": list(AGENTS),
                "repeat": args.repeat,
                "pathological_budget_s": args.budget,
            },
            **data,
            "command": "python -m benchmarks.engine",
            "docs_tables": recorded(),
        }
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        progress(f"results written to {args.json}")

    if args.write_docs:
        write_recorded("python -m benchmarks.engine" + (" --quick" if args.quick else ""))

    if args.check:
        statuses = [t["status"] for t in data["targets"].values()]
        if ours_problem is not None or any(s != "PASS" for s in statuses):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
