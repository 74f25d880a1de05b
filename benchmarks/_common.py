"""Shared helpers for the benchmark scripts in this directory.

The scripts are modules run from the root of a checkout (``python -m
benchmarks.<script>``), so the checkout's ``scrapy_robotrules`` and the
tests' helpers (``tests.helpers``) are imported as they are, never an older
installed copy. This module finds the robots.txt corpus, times code and
prints plain-text tables.

The full corpus (3,000 files) lives in ``<shared>/corpus``, where
``<shared>`` is the directory ``shared`` next to the repository root, or the
directory named by the environment variable ``ROBOTRULES_SHARED``. Without
it, the benchmarks use the repository's part of it (``tests/data/corpus.tar.gz``,
600 files) and say so in their output (:attr:`Corpus.source`).
"""

from __future__ import annotations

import gc
import importlib.metadata
import json
import os
import platform
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias, TypeVar
from urllib.parse import urlsplit

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_ENV_VAR = "ROBOTRULES_SHARED"
SUBSET_ARCHIVE = Path("tests") / "data" / "corpus.tar.gz"


class CorpusNotFoundError(RuntimeError):
    """Neither the shared corpus nor the repository's part of it can be read."""


# --------------------------------------------------------------------------
# Locating and loading the corpus
# --------------------------------------------------------------------------


def shared_dir() -> Path:
    """Return the shared directory: ``$ROBOTRULES_SHARED`` or ``<repo>/../shared``."""
    override = os.environ.get(SHARED_ENV_VAR)
    if override:
        return Path(override).expanduser().resolve()
    return Path(__file__).resolve().parents[2] / "shared"


def corpus_dir() -> Path:
    """Return the corpus directory, raising :class:`CorpusNotFoundError` if it is absent."""
    path = shared_dir() / "corpus"
    missing = [name for name in ("robots", "urls.tsv") if not (path / name).exists()]
    if missing:
        raise CorpusNotFoundError(
            f"the full robots.txt corpus is not at {path} (missing: {', '.join(missing)}; "
            f"set {SHARED_ENV_VAR} to the directory that contains 'corpus/')"
        )
    return path


@dataclass(frozen=True)
class RobotsFile:
    """One robots.txt file of the corpus, as raw bytes."""

    name: str
    robots_url: str
    body: bytes


@dataclass(frozen=True)
class Corpus:
    """The loaded corpus: files, and the URLs to check against them."""

    source: str
    """Which corpus: the full shared one, or the repository's part (for the output)."""
    files: list[RobotsFile]
    # (index into ``files``, URL) in the order of urls.tsv
    urls: list[tuple[int, str]]
    total_files: int

    @property
    def total_bytes(self) -> int:
        return sum(len(f.body) for f in self.files)


def spread_subset(names: Sequence[str], limit: int | None) -> list[str]:
    """Return ``limit`` names spread evenly over ``names`` (all of them if no limit)."""
    if limit is None or limit >= len(names):
        return list(names)
    if limit <= 0:
        return []
    step = len(names) / limit
    return [names[int(i * step)] for i in range(limit)]


def _read_shared() -> tuple[str, dict[str, bytes], list[tuple[str, str]]]:
    """(source, file name -> body, (file name, URL) rows) of the full shared corpus."""
    root = corpus_dir()
    bodies = {p.name: p.read_bytes() for p in sorted((root / "robots").iterdir()) if p.is_file()}
    rows: list[tuple[str, str]] = []
    with (root / "urls.tsv").open(encoding="utf-8", newline="") as fh:
        header = fh.readline().rstrip("\r\n").split("\t")
        if header[:2] != ["file", "url"]:
            raise CorpusNotFoundError(f"unexpected header in urls.tsv: {header!r}")
        for raw_line in fh:
            line = raw_line.rstrip("\r\n")
            if line:
                name, url = line.split("\t", 1)
                rows.append((name, url))
    return f"the full shared corpus ({len(bodies):,} files)", bodies, rows


def _read_repository_subset(why: str) -> tuple[str, dict[str, bytes], list[tuple[str, str]]]:
    """The same, from the repository's part of the corpus (tests/helpers/corpus_subset.py)."""
    from tests.helpers.corpus_subset import load  # the one reader of the archive

    try:
        subset = load(REPO_ROOT / SUBSET_ARCHIVE)
    except (OSError, KeyError, tarfile.TarError) as exc:
        raise CorpusNotFoundError(f"cannot read {SUBSET_ARCHIVE}: {exc}") from exc
    source = (
        f"the repository's part of the corpus ({SUBSET_ARCHIVE}, {len(subset.files):,} files), "
        f"because {why}"
    )
    return source, subset.files, subset.urls


def read_corpus() -> tuple[str, dict[str, bytes], list[tuple[str, str]]]:
    """The full shared corpus when it is there, else the repository's part of it."""
    try:
        return _read_shared()
    except CorpusNotFoundError as exc:
        return _read_repository_subset(str(exc))


def load_corpus(limit: int | None = None) -> Corpus:
    """Read the corpus into memory.

    With ``limit``, only that many files (spread evenly over the sorted file
    names, so that large and odd files are still represented) and their URLs
    are loaded.
    """
    source, bodies, rows = read_corpus()
    all_names = sorted(bodies)
    names = spread_subset(all_names, limit)
    index = {name: i for i, name in enumerate(names)}

    urls: list[tuple[int, str]] = []
    origins: dict[int, str] = {}
    for name, url in rows:
        i = index.get(name)
        if i is None:
            continue
        urls.append((i, url))
        if i not in origins:
            parts = urlsplit(url)
            origins[i] = f"{parts.scheme}://{parts.netloc}"

    files = []
    for i, name in enumerate(names):
        host = name.removesuffix(".txt")
        origin = origins.get(i, f"https://{host}")
        files.append(RobotsFile(name=name, robots_url=f"{origin}/robots.txt", body=bodies[name]))
    return Corpus(source=source, files=files, urls=urls, total_files=len(all_names))


# --------------------------------------------------------------------------
# Making the package under test importable
# --------------------------------------------------------------------------


def distribution_version(name: str) -> str | None:
    """Return the installed version of a distribution, or ``None``."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def environment() -> dict[str, str]:
    """Describe the interpreter and machine (for the report header and JSON)."""
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": str(os.cpu_count() or "?"),
    }


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------


def timed(func: Callable[[], T]) -> tuple[float, T]:
    """Run ``func`` once (after a garbage collection) and return (seconds, result)."""
    gc.collect()
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


def per_call(
    func: Callable[[], object],
    *,
    min_time: float = 0.2,
    repeat: int = 3,
    budget: float | None = None,
) -> tuple[float, int, int]:
    """Measure the time of one call of ``func``, in seconds.

    Like :func:`timeit.Timer.autorange`: the number of calls per loop doubles
    until a loop takes ``min_time``; then the best of ``repeat`` loops is
    taken. Calls slower than ``min_time`` are timed singly. If ``budget`` is
    given, no new loop is started once the time spent would exceed it (at
    least one loop always runs).

    Returns ``(seconds per call, calls per loop, loops timed)``.
    """
    started = time.perf_counter()

    def loop(number: int) -> float:
        t0 = time.perf_counter()
        for _ in range(number):
            func()
        return time.perf_counter() - t0

    def affordable(expected: float) -> bool:
        if budget is None:
            return True
        return time.perf_counter() - started + expected <= budget

    number = 1
    elapsed = loop(number)
    while elapsed < min_time:
        if not affordable(elapsed * 2):
            break
        number *= 2
        elapsed = loop(number)
    best = elapsed
    loops = 1
    while loops < repeat and affordable(elapsed):
        elapsed = loop(number)
        best = min(best, elapsed)
        loops += 1
    return best / number, number, loops


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------


def fmt_seconds(seconds: float | None) -> str:
    """Format a duration with a unit suited to its size (``None`` -> ``n/a``)."""
    if seconds is None:
        return "n/a"
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.3g} µs"
    return f"{seconds * 1e9:.3g} ns"


def fmt_bytes(size: float | None) -> str:
    """Format a byte count in decimal units (``None`` -> ``n/a``)."""
    if size is None:
        return "n/a"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{int(size)} B"


def fmt_ratio(ratio: float | None) -> str:
    """Format a ratio such as ours/protego (``None`` -> ``n/a``)."""
    if ratio is None:
        return "n/a"
    return f"{ratio:.3f}"


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """Return ``numerator / denominator``, or ``None`` if either is missing or zero."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


Row: TypeAlias = Sequence[str] | None
"""A table row; ``None`` draws a separator line."""


def render_table(headers: Sequence[str], rows: Sequence[Row]) -> str:
    """Render a plain-text table: first column left-aligned, the others right-aligned."""
    columns = len(headers)
    widths = [len(h) for h in headers]
    for row in rows:
        if row is None:
            continue
        if len(row) != columns:
            raise ValueError(f"row has {len(row)} cells, expected {columns}: {row!r}")
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        out = [cells[0].ljust(widths[0])]
        out.extend(cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    lines = [line(headers), rule]
    lines.extend(rule if row is None else line(row) for row in rows)
    return "\n".join(lines)


def finish(failures: Sequence[str], json_path: str | None, data: dict[str, Any]) -> int:
    """Print what failed and write ``data`` to ``json_path`` if asked: the exit status."""
    for failure in failures:
        print(f"FAILED: {failure}")
    if json_path:
        Path(json_path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 1 if failures else 0


def progress(message: str) -> None:
    """Report progress on stderr, keeping stdout for the results."""
    print(message, file=sys.stderr, flush=True)


def module_command(script: str, *args: str) -> list[str]:
    """``python -m benchmarks.<script's name> args``: a benchmark run again as a worker.

    Run with the repository root as the working directory (``cwd=REPO_ROOT``),
    as the scripts themselves are.
    """
    return [sys.executable, "-m", f"benchmarks.{Path(script).stem}", *args]
