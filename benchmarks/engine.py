"""Benchmark the robots.txt engine against Protego and urllib.robotparser.

Usage::

    python benchmarks/engine.py [--quick] [--files N] [--repeat R] [--budget S]
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
parse <= 0.25, checks <= 0.33, memory <= 0.30, and (issue 12) parse plus fresh
checks <= 0.35 (the sum of one run's two times, best run) and memory held after
the checks <= 0.40.

An exception raised by a tool on a file (or on a check) is counted and
reported, not fatal. ``--quick`` is a smoke run on an evenly spread subset of
300 files with a 5 s budget; ``--check`` makes the exit status 1 unless ours
was measured and every target passed.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.robotparser import RobotFileParser

from _common import (
    REPO_ROOT,
    Corpus,
    CorpusNotFoundError,
    Row,
    distribution_version,
    environment,
    fmt_bytes,
    fmt_ratio,
    fmt_seconds,
    load_corpus,
    per_call,
    progress,
    ratio,
    render_table,
    timed,
    use_checkout,
)

P = TypeVar("P")

AGENTS = ("examplebot", "Googlebot")
TARGETS = {
    "parse": 0.25,
    "checks": 0.33,
    "memory": 0.30,
    # Issue 12: a file parsed and every URL of it checked, and what is held then.
    "parse_and_checks": 0.35,
    "memory_after_checks": 0.40,
}
QUICK_FILES = 300
DEFAULT_BUDGET = 20.0
QUICK_BUDGET = 5.0
PATHOLOGICAL_STARS = 13
PATHOLOGICAL_NS = (5_000, 100_000)
STAR_SWEEP = (4, 8, 16, 32)
STAR_SWEEP_N = 100_000
PATHOLOGICAL_HOST = "https://example.com"
PATHOLOGICAL_AGENT = "examplebot"
WARMUP_ROBOTS = b"User-agent: *\nDisallow: /private\nDisallow: /*.php$\nAllow: /private/ok\n"


# --------------------------------------------------------------------------
# The tools
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool(Generic[P]):
    """A robots.txt implementation, seen through its natural API.

    ``check_all`` is a loop written out per tool (not a generic loop around
    ``check_one``), so that each tool is timed calling its own method directly.
    """

    key: str
    label: str
    parse: Callable[[bytes, str], P]
    check_one: Callable[[P, str, str], bool]
    # (parsed object, URL) pairs, agents -> (calls answered "allowed", calls that raised)
    check_all: Callable[[Iterable[tuple[P, str]], Sequence[str]], tuple[int, int]]


def _ours_tool() -> Tool[Any]:
    use_checkout()
    from scrapy_robotrules import RobotsTxt

    def parse(body: bytes, robots_url: str) -> RobotsTxt:
        return RobotsTxt.parse(body, url=robots_url)

    def check_one(rt: RobotsTxt, url: str, agent: str) -> bool:
        return bool(rt.allowed(url, agent))

    def check_all(pairs: Iterable[tuple[RobotsTxt, str]], agents: Sequence[str]) -> tuple[int, int]:
        allowed = raised = 0
        for rt, url in pairs:
            for agent in agents:
                try:
                    if rt.allowed(url, agent):
                        allowed += 1
                except Exception:
                    raised += 1
        return allowed, raised

    return Tool("ours", "ours", parse, check_one, check_all)


def _protego_tool() -> Tool[Any]:
    from protego import Protego

    def parse(body: bytes, robots_url: str) -> Protego:
        return Protego.parse(body.decode("utf-8-sig", errors="ignore"))

    def check_one(rp: Protego, url: str, agent: str) -> bool:
        return bool(rp.can_fetch(url, agent))

    def check_all(pairs: Iterable[tuple[Protego, str]], agents: Sequence[str]) -> tuple[int, int]:
        allowed = raised = 0
        for rp, url in pairs:
            for agent in agents:
                try:
                    if rp.can_fetch(url, agent):
                        allowed += 1
                except Exception:
                    raised += 1
        return allowed, raised

    return Tool("protego", "Protego", parse, check_one, check_all)


def _urllib_tool() -> Tool[Any]:
    def parse(body: bytes, robots_url: str) -> RobotFileParser:
        rp = RobotFileParser()
        rp.parse(body.decode("utf-8-sig", errors="ignore").splitlines())
        return rp

    def check_one(rp: RobotFileParser, url: str, agent: str) -> bool:
        return rp.can_fetch(agent, url)

    def check_all(
        pairs: Iterable[tuple[RobotFileParser, str]], agents: Sequence[str]
    ) -> tuple[int, int]:
        allowed = raised = 0
        for rp, url in pairs:
            for agent in agents:
                try:
                    if rp.can_fetch(agent, url):
                        allowed += 1
                except Exception:
                    raised += 1
        return allowed, raised

    return Tool("urllib", "urllib.robotparser", parse, check_one, check_all)


TOOL_ORDER = ("ours", "protego", "urllib")
_FACTORIES: dict[str, Callable[[], Tool[Any]]] = {
    "ours": _ours_tool,
    "protego": _protego_tool,
    "urllib": _urllib_tool,
}


def load_tool(key: str) -> Tool[Any]:
    return _FACTORIES[key]()


def describe_ours() -> str:
    module = sys.modules.get("scrapy_robotrules")
    if module is None:
        return "scrapy_robotrules"
    version = getattr(module, "__version__", None) or distribution_version("scrapy-robotrules")
    where = "installed"
    module_file = getattr(module, "__file__", None)
    if module_file and Path(module_file).resolve().is_relative_to(REPO_ROOT):
        where = "this checkout"
    return f"scrapy_robotrules {version or '(version unknown)'} ({where})"


# --------------------------------------------------------------------------
# Parsing and checking the corpus
# --------------------------------------------------------------------------


@dataclass
class ParseOutcome(Generic[P]):
    parsed: list[P | None]
    raised: int
    # (index of the input, "ExceptionType: message")
    errors: list[tuple[int, str]]


def parse_all(tool: Tool[P], inputs: Iterable[tuple[bytes, str]]) -> ParseOutcome[P]:
    """Parse every input; a file on which the tool raises becomes ``None``."""
    parse = tool.parse
    parsed: list[P | None] = []
    append = parsed.append
    errors: list[tuple[int, str]] = []
    for index, (body, robots_url) in enumerate(inputs):
        try:
            append(parse(body, robots_url))
        except Exception as exc:
            append(None)
            errors.append((index, f"{type(exc).__name__}: {exc}"[:200]))
    return ParseOutcome(parsed, len(errors), errors)


def pairs_for(parsed: Sequence[P | None], urls: Sequence[tuple[int, str]]) -> list[tuple[P, str]]:
    """Pair each URL with its own file's parsed object (URLs of failed files are dropped)."""
    return [(obj, url) for index, url in urls if (obj := parsed[index]) is not None]


@dataclass
class ToolStats:
    key: str
    label: str
    parse_runs: list[float] = field(default_factory=list)
    checks_fresh_runs: list[float] = field(default_factory=list)
    checks_warm_runs: list[float] = field(default_factory=list)
    parse_raised: int = 0
    parse_errors: list[str] = field(default_factory=list)
    checks_made: int = 0
    checks_raised: int = 0
    checks_allowed: int = 0
    checks_unstable: bool = False
    memory_parsed: int | None = None
    memory_after_checks: int | None = None
    memory_peak_parse: int | None = None
    memory_error: str | None = None

    @property
    def parse_s(self) -> float | None:
        return min(self.parse_runs) if self.parse_runs else None

    @property
    def checks_fresh_s(self) -> float | None:
        return min(self.checks_fresh_runs) if self.checks_fresh_runs else None

    @property
    def checks_warm_s(self) -> float | None:
        return min(self.checks_warm_runs) if self.checks_warm_runs else None

    @property
    def parse_and_checks_s(self) -> float | None:
        """Best run of parsing plus fresh checks (the two timed in the same run)."""
        runs = [p + c for p, c in zip(self.parse_runs, self.checks_fresh_runs, strict=False)]
        return min(runs) if runs else None

    @property
    def per_check_s(self) -> float | None:
        best = self.checks_fresh_s
        if best is None or not self.checks_made:
            return None
        return best / self.checks_made

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "parse_s": self.parse_s,
            "parse_runs_s": self.parse_runs,
            "parse_raised": self.parse_raised,
            "parse_errors": self.parse_errors[:20],
            "checks_fresh_s": self.checks_fresh_s,
            "checks_fresh_runs_s": self.checks_fresh_runs,
            "checks_warm_s": self.checks_warm_s,
            "checks_warm_runs_s": self.checks_warm_runs,
            "per_check_fresh_s": self.per_check_s,
            "checks_made": self.checks_made,
            "checks_raised": self.checks_raised,
            "checks_allowed": self.checks_allowed,
            "checks_results_differed_between_runs": self.checks_unstable,
            "memory_parsed_bytes": self.memory_parsed,
            "memory_after_checks_bytes": self.memory_after_checks,
            "memory_peak_during_parse_bytes": self.memory_peak_parse,
            "memory_error": self.memory_error,
        }


def time_tools(tools: Sequence[Tool[Any]], corpus: Corpus, repeat: int) -> dict[str, ToolStats]:
    """Time parsing and checking, best of ``repeat``, the tools taking turns in each run."""
    inputs = [(f.body, f.robots_url) for f in corpus.files]
    stats = {tool.key: ToolStats(tool.key, tool.label) for tool in tools}
    for run in range(1, repeat + 1):
        for tool in tools:
            st = stats[tool.key]
            progress(f"[run {run}/{repeat}] {tool.label}: parse + checks")
            seconds, outcome = timed(functools.partial(parse_all, tool, inputs))
            st.parse_runs.append(seconds)
            pairs = pairs_for(outcome.parsed, corpus.urls)
            fresh_s, (allowed, raised) = timed(functools.partial(tool.check_all, pairs, AGENTS))
            warm_s, warm_result = timed(functools.partial(tool.check_all, pairs, AGENTS))
            st.checks_fresh_runs.append(fresh_s)
            st.checks_warm_runs.append(warm_s)
            if run == 1:
                st.parse_raised = outcome.raised
                st.parse_errors = [f"{corpus.files[i].name}: {msg}" for i, msg in outcome.errors]
                st.checks_made = len(pairs) * len(AGENTS)
                st.checks_allowed = allowed
                st.checks_raised = raised
            elif (allowed, raised) != (st.checks_allowed, st.checks_raised):
                st.checks_unstable = True
            if warm_result != (allowed, raised):
                st.checks_unstable = True
            del outcome, pairs
            gc.collect()
    return stats


# --------------------------------------------------------------------------
# Subprocess workers: memory and pathological patterns
# --------------------------------------------------------------------------


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
        seconds, number, loops = per_call(
            functools.partial(tool.check_one, parsed, url, PATHOLOGICAL_AGENT),
            budget=remaining,
        )
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
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", *args]
    # stderr goes to a file, so that a chatty worker cannot block on a full pipe.
    with (
        tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errfile,
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errfile, text=True) as proc,
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
# Report
# --------------------------------------------------------------------------


def _cell(case: dict[str, Any] | None) -> str:
    if case is None:
        return "n/a"
    if case.get("timed_out"):
        return f"> {case['budget_s']:g} s"
    if "error" in case:
        return "error"
    return fmt_seconds(case["per_check_s"])


def _case_ratio(ours: dict[str, Any] | None, protego: dict[str, Any] | None) -> str:
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
            prow.append([f"N = {n:,}", *[_cell(c) for c in cells], _case_ratio(cells[0], cells[1])])
        title = f"Pathological rule 'Disallow: {rule}', path of N 'a': time per check"
        table = render_table(["", "ours", "Protego", "urllib", "ours/protego"], prow)
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
            srow.append([f"{case['stars']} stars", _cell(case), rel])
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


def worker_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="engine.py --worker")
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        return worker_main(argv[1:])
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
        }
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        progress(f"results written to {args.json}")

    if args.check:
        statuses = [t["status"] for t in data["targets"].values()]
        if ours_problem is not None or any(s != "PASS" for s in statuses):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
