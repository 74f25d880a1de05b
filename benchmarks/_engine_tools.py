"""The robots.txt parsers ``engine.py`` compares, each through its natural API.

Ours (``scrapy_robotrules.RobotsTxt``) parses bytes; Protego and
``urllib.robotparser`` parse text decoded the way Scrapy decodes it for
Protego, and that decoding is part of their parsing. Also here: parsing and
checking a corpus with each tool in turn, and the figures kept per tool.
"""

from __future__ import annotations

import functools
import gc
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.robotparser import RobotFileParser

from benchmarks._common import REPO_ROOT, Corpus, distribution_version, progress, timed

P = TypeVar("P")

AGENTS = ("examplebot", "Googlebot")
WARMUP_ROBOTS = b"User-agent: *\nDisallow: /private\nDisallow: /*.php$\nAllow: /private/ok\n"


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
