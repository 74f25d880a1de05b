"""``engine.py``'s measures that need a fresh process: memory held, and pathological patterns.

``python -m benchmarks._engine_workers memory|pathological --tool T ...`` is
one such process; it prints its figures as one JSON line. A pathological
case has a time budget: past it, the worker is killed and the case reported
as "> budget".
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

from benchmarks._common import (
    REPO_ROOT,
    fmt_ratio,
    fmt_seconds,
    load_corpus,
    module_command,
    per_call,
    progress,
    ratio,
)
from benchmarks._engine_tools import (
    AGENTS,
    TOOL_ORDER,
    WARMUP_ROBOTS,
    Tool,
    ToolStats,
    load_tool,
    parse_all,
)

DEFAULT_BUDGET = 20.0
PATHOLOGICAL_STARS = 13
PATHOLOGICAL_NS = (5_000, 100_000)
STAR_SWEEP = (4, 8, 16, 32)
STAR_SWEEP_N = 100_000
PATHOLOGICAL_HOST = "https://example.com"
PATHOLOGICAL_AGENT = "examplebot"


def worker_memory(tool_key: str, files: int | None) -> dict[str, Any]:
    """Measure, in this (fresh) process, the memory one tool holds for the corpus."""
    tool = load_tool(tool_key)
    corpus = load_corpus(files)
    inputs = [(f.body, f.robots_url) for f in corpus.files]
    urls = corpus.urls

    # Import-time and first-use state is not what we are measuring.
    warm = tool.parse(WARMUP_ROBOTS, "https://warmup.example/robots.txt")
    tool.check_all([(warm, "https://warmup.example/private/x.php")], AGENTS)
    del warm
    gc.collect()

    tracemalloc.start()
    try:
        # Fresh copies made inside the traced region: a tool that keeps its
        # input (bytes or URL) alive is charged for it, one that drops it is not.
        copies = ((memoryview(b).tobytes(), "".join(["", u, ""])) for b, u in inputs)
        outcome = parse_all(tool, copies)
        gc.collect()
        parsed_bytes, peak_bytes = tracemalloc.get_traced_memory()
        parsed = outcome.parsed
        tool.check_all(((obj, url) for i, url in urls if (obj := parsed[i]) is not None), AGENTS)
        gc.collect()
        after_bytes = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return {
        "parsed_bytes": parsed_bytes,
        "after_checks_bytes": after_bytes,
        "peak_during_parse_bytes": peak_bytes,
        "parse_raised": outcome.raised,
    }


def pathological_rule(stars: int) -> str:
    """``/*a*a…*a*b`` with ``stars`` asterisks (13 gives the rule benchmarked)."""
    return "/" + "*a" * (stars - 1) + "*b"


def worker_pathological(tool_key: str, n: int, stars: int, budget: float) -> dict[str, Any]:
    """Time one check of the pathological rule.

    Prints ``ready`` once the tool is imported: from then on the parent gives
    the worker ``budget`` seconds (parsing the one-rule file included).
    """
    tool = load_tool(tool_key)
    body = f"User-agent: *\nDisallow: {pathological_rule(stars)}\n".encode()
    url = f"{PATHOLOGICAL_HOST}/" + "a" * n
    print("ready", flush=True)

    start = time.perf_counter()
    parsed = tool.parse(body, f"{PATHOLOGICAL_HOST}/robots.txt")
    parse_s = time.perf_counter() - start
    start = time.perf_counter()
    allowed = tool.check_one(parsed, url, PATHOLOGICAL_AGENT)
    first = time.perf_counter() - start

    remaining = 0.8 * budget - parse_s - first
    if first >= 0.2 or remaining < 2 * first:
        seconds, number, loops = first, 1, 1  # too slow to repeat within the budget
    else:
        # Two paths of the same work in turn: a tool may keep its last answer
        # (ours does), and a check asked again at once would time that.
        urls = itertools.cycle((url, url[:-1] + "c"))

        def check() -> bool:
            return tool.check_one(parsed, next(urls), PATHOLOGICAL_AGENT)

        seconds, number, loops = per_call(check, budget=remaining)
    return {
        "per_check_s": min(seconds, first),
        "first_check_s": first,
        "parse_s": parse_s,
        "calls_per_loop": number,
        "loops": loops,
        "allowed": allowed,
    }


def run_worker(args: list[str], *, budget: float | None = None) -> dict[str, Any]:
    """Run this script as a worker subprocess and return its JSON answer.

    With ``budget``, the worker must print ``ready`` and then answer within
    ``budget`` seconds, or it is killed and ``{"timed_out": True}`` returned.
    """
    command = module_command(__file__, *args)
    # stderr goes to a file, so that a chatty worker cannot block on a full pipe.
    with (
        tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errfile,
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=errfile, text=True, cwd=REPO_ROOT
        ) as proc,
    ):
        assert proc.stdout is not None

        def failure() -> dict[str, Any]:
            errfile.seek(0)
            return {"error": _worker_error(errfile.read(), proc.returncode)}

        if budget is not None and proc.stdout.readline().strip() != "ready":
            proc.communicate()
            return failure()
        try:
            out, _ = proc.communicate(timeout=budget)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return {"timed_out": True, "budget_s": budget}
        if proc.returncode != 0:
            return failure()
    try:
        answer: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"unreadable worker output: {out[-200:]!r}"}
    return answer


def _worker_error(stderr: str, returncode: int | None) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else f"exit status {returncode}"
    return last[:300]


def measure_memory(
    tools: Sequence[Tool[Any]], stats: dict[str, ToolStats], files: int | None
) -> None:
    for tool in tools:
        progress(f"memory: {tool.label} (subprocess)")
        args = ["memory", "--tool", tool.key]
        if files is not None:
            args += ["--files", str(files)]
        answer = run_worker(args)
        st = stats[tool.key]
        if "error" in answer:
            st.memory_error = str(answer["error"])
            continue
        st.memory_parsed = int(answer["parsed_bytes"])
        st.memory_after_checks = int(answer["after_checks_bytes"])
        st.memory_peak_parse = int(answer["peak_during_parse_bytes"])


def measure_pathological(
    tools: Sequence[Tool[Any]], budget: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    cases: list[dict[str, Any]] = []
    for n in PATHOLOGICAL_NS:
        for tool in tools:
            progress(f"pathological: {tool.label}, {PATHOLOGICAL_STARS} stars, N={n:,}")
            args = ["pathological", "--tool", tool.key, "--n", str(n)]
            args += ["--stars", str(PATHOLOGICAL_STARS), "--budget", str(budget)]
            answer = run_worker(args, budget=budget)
            cases.append({"tool": tool.key, "n": n, "stars": PATHOLOGICAL_STARS, **answer})
    sweep: list[dict[str, Any]] = []
    if any(tool.key == "ours" for tool in tools):
        for stars in STAR_SWEEP:
            progress(f"pathological: ours, {stars} stars, N={STAR_SWEEP_N:,}")
            args = ["pathological", "--tool", "ours", "--n", str(STAR_SWEEP_N)]
            args += ["--stars", str(stars), "--budget", str(budget)]
            answer = run_worker(args, budget=budget)
            sweep.append({"tool": "ours", "n": STAR_SWEEP_N, "stars": stars, **answer})
    return cases, sweep


# --------------------------------------------------------------------------
# Report cells of the pathological cases
# --------------------------------------------------------------------------


def case_cell(case: dict[str, Any] | None) -> str:
    if case is None:
        return "n/a"
    if case.get("timed_out"):
        return f"> {case['budget_s']:g} s"
    if "error" in case:
        return "error"
    return fmt_seconds(case["per_check_s"])


def case_ratio(ours: dict[str, Any] | None, protego: dict[str, Any] | None) -> str:
    """ours/protego for one pathological case; a bound when one side timed out."""
    if ours is None or protego is None:
        return "n/a"
    if "per_check_s" in ours and "per_check_s" in protego:
        return fmt_ratio(ratio(ours["per_check_s"], protego["per_check_s"]))
    if "per_check_s" in ours and protego.get("timed_out"):
        return f"< {ours['per_check_s'] / protego['budget_s']:.2g}"
    if ours.get("timed_out") and "per_check_s" in protego:
        return f"> {ours['budget_s'] / protego['per_check_s']:.2g}"
    return "n/a"


def worker_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="_engine_workers.py")
    parser.add_argument("kind", choices=["memory", "pathological"])
    parser.add_argument("--tool", required=True, choices=TOOL_ORDER)
    parser.add_argument("--files", type=int)
    parser.add_argument("--n", type=int, default=PATHOLOGICAL_NS[0])
    parser.add_argument("--stars", type=int, default=PATHOLOGICAL_STARS)
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET)
    args = parser.parse_args(argv)
    if args.kind == "memory":
        answer = worker_memory(args.tool, args.files)
    else:
        answer = worker_pathological(args.tool, args.n, args.stars, args.budget)
    print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
