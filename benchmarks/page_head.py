"""Hostile heads read for their meta tags: CPU and memory, against the reader of another revision.

Usage::

    python -m benchmarks.page_head [--against REV] [--repeat N] [--json PATH]

Each case is one page read by ``scrapy_robotrules.engine.page.html``
(:data:`CASES`): ``head_metas`` (every meta tag, as the crawl layer asks)
or ``nofollow_links``, within the largest ``ROBOTRULES_PAGE_MAX_HTML``
(10 MB) for the hostile pages and the default one (256 KiB) for the
ordinary ones. The first is the hostile head of the review that replaced
the hand-written scanner with lxml's parser: ``<meta `` and then ``a=b `` a
million times, 4 MB never ended.

With ``--against REV``, the same cases are read by the module as it was at
the git revision ``REV`` too (``git show REV:scrapy_robotrules/engine/page/html.py``,
loaded by path: the module stands alone), beside this checkout's, and the
table shows this checkout's figures over the other's. ``--against a731144``
reads them with the hand-written scanner, the last revision that had it.

Each reading of each case runs in a worker process of its own: the CPU time
(``time.process_time``) of the best of ``--repeat`` readings (3; a case that
takes less than 50 ms is read in a loop for at least that long, and the
figure is per reading), and how much the process's peak resident memory
grew during its first reading (Linux: ``VmHWM``, reset just before; the
parser's own memory counts, which Python's allocator does not see).

Target, with ``--against``: on the hostile head of the review, this
checkout's CPU at most a third of the other's. No target on memory: lxml's
parser holds the attributes of the tag it reads, some twenty bytes a byte,
where the hand-written scanner held the text alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from benchmarks._common import (
    REPO_ROOT,
    environment,
    finish,
    fmt_bytes,
    fmt_ratio,
    fmt_seconds,
    progress,
    ratio,
    render_table,
)
from benchmarks._crawler import run_worker

MODULE = "scrapy_robotrules/engine/page/html.py"
LARGEST = 10_000_000
"""The largest ``ROBOTRULES_PAGE_MAX_HTML``."""
DEFAULT = 262_144
"""The default ``ROBOTRULES_PAGE_MAX_HTML``."""
REVIEWED = "hostile head"
TARGET = 1 / 3
"""This checkout's CPU over the other's on the reviewed head, at most."""
MIN_LOOP = 0.05


class Case(NamedTuple):
    """A page, the reading asked of it, and the bytes read of it at most."""

    page: Callable[[], bytes]
    reading: str
    limit: int


def _typical_head() -> bytes:
    metas = "".join(f'<meta name="m{i}" content="some content {i}">' for i in range(20))
    links = "".join(f'<link rel="stylesheet" href="/s{i}.css">' for i in range(20))
    style = "body { color: red; } " * 500
    script = "var x = '<a>'; " * 500
    head = (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>A page</title>{metas}"
        f'<meta name="robots" content="noindex, nofollow"><style>{style}</style>'
        f"<script>{script}</script>{links}</head><body>"
    )
    body = "<div class=c><p>Some text <a href='/x' rel=nofollow>link</a> and more.</p></div>"
    return (head + body * 3000 + "</body></html>").encode()


def _names_all_different() -> bytes:
    return ("<meta " + "".join(f"a{i}=b " for i in range(400_000)) + ">").encode()


CASES: dict[str, Case] = {
    REVIEWED: Case(lambda: b"<meta " + b"a=b " * 1_000_000, "head", LARGEST),
    "the same, ended, wanted last": Case(
        lambda: b"<meta " + b"a=b " * 1_000_000 + b'name="robots" content="noindex">',
        "head",
        LARGEST,
    ),
    "names all different": Case(_names_all_different, "head", LARGEST),
    "tags of attributes": Case(lambda: b"<meta a=b a=b a=b>" * 222_222, "head", LARGEST),
    "robots meta tags": Case(
        lambda: b'<meta name="robots" content="noarchive">' * 100_000, "head", LARGEST
    ),
    "links": Case(lambda: b'<a rel=nofollow href="/x" class=c>' * 117_647, "links", LARGEST),
    "typical head (20 kB)": Case(_typical_head, "head", DEFAULT),
    "typical page's links": Case(_typical_head, "links", DEFAULT),
}


def _load(path: str) -> ModuleType:
    if not path:
        from scrapy_robotrules.engine.page import html

        return html
    spec = importlib.util.spec_from_file_location("page_html_against", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _memory(field: str) -> int | None:
    try:
        lines = Path("/proc/self/status").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return None


def measure(path: str, name: str, repeat: int) -> dict[str, Any]:
    """In the worker: the best CPU per reading of case ``name``, and its memory."""
    module = _load(path)
    case = CASES[name]
    if case.reading == "head":

        def read(page: bytes) -> int:
            return len(module.head_metas(page, limit=case.limit, max_tags=None))
    else:

        def read(page: bytes) -> int:
            return len(module.nofollow_links(page, limit=case.limit))

    read(b'<meta name="a" content="b"><a rel="nofollow" href="/x">')
    page = case.page()
    try:
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")
        before = _memory("VmRSS")
    except OSError:
        before = None
    found = read(page)
    peak = _memory("VmHWM")
    grown = peak - before if peak is not None and before is not None else None
    best = float("inf")
    for _ in range(repeat):
        readings = 0
        start = time.process_time()
        while True:
            read(page)
            readings += 1
            spent = time.process_time() - start
            if spent >= MIN_LOOP:
                break
        best = min(best, spent / readings)
    return {"case": name, "bytes": len(page), "found": found, "cpu": best, "grown": grown}


def _against(revision: str, folder: Path) -> str:
    """The reader as it was at ``revision``, written in ``folder``: its path."""
    text = subprocess.run(
        ["git", "show", f"{revision}:{MODULE}"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = folder / "html_against.py"
    path.write_text(text, encoding="utf-8")
    return str(path)


def run(against: str | None, repeat: int) -> tuple[dict[str, dict[str, Any]], list[str]]:
    readers = {"this checkout": ""}
    failures: list[str] = []
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        if against:
            readers[against] = _against(against, Path(folder))
        for reader, path in readers.items():
            for name in CASES:
                progress(f"{reader}: {name}")
                answer, why = run_worker(__file__, [path, name, str(repeat)], timeout=600)
                if answer is None:
                    failures.append(f"{reader}, {name}: {why}")
                    continue
                results.setdefault(name, {})[reader] = answer
    return results, failures


def table(results: dict[str, dict[str, Any]], against: str | None) -> str:
    mine = "this checkout"
    headers = ["case", "bytes", "reading", "found", "CPU", "memory"]
    if against:
        headers += [f"CPU {against}", f"memory {against}", "CPU ratio"]
    rows = []
    for name, by_reader in results.items():
        ours = by_reader.get(mine)
        if ours is None:
            continue
        row = [
            name,
            fmt_bytes(ours["bytes"]),
            CASES[name].reading,
            str(ours["found"]),
            fmt_seconds(ours["cpu"]),
            fmt_bytes(ours["grown"]),
        ]
        if against:
            theirs = by_reader.get(against, {})
            row += [
                fmt_seconds(theirs.get("cpu")),
                fmt_bytes(theirs.get("grown")),
                fmt_ratio(ratio(ours["cpu"], theirs.get("cpu"))),
            ]
        rows.append(row)
    return render_table(headers, rows)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        path, name, repeat = argv[1:4]
        print(json.dumps(measure(path, name, int(repeat))), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", metavar="REV", help="also read with html.py as at REV")
    parser.add_argument("--repeat", type=int, default=3, help="readings timed per case (3)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.repeat <= 0:
        parser.error("--repeat must be positive")
    results, failures = run(args.against, args.repeat)
    print(", ".join(f"{key}: {value}" for key, value in environment().items()))
    print(table(results, args.against))
    reviewed = results.get(REVIEWED, {})
    if args.against and "this checkout" in reviewed and args.against in reviewed:
        value = ratio(reviewed["this checkout"]["cpu"], reviewed[args.against]["cpu"])
        verdict = "PASS" if value is not None and value <= TARGET else "FAIL"
        print(
            f"{REVIEWED}: CPU over {args.against}'s {fmt_ratio(value)}, target <= 0.333 ({verdict})"
        )
        if verdict == "FAIL":
            failures.append(f"{REVIEWED}: CPU ratio {fmt_ratio(value)} over {TARGET:.3f}")
    data = {"environment": environment(), "against": args.against, "results": results}
    return finish(failures, args.json, data)


if __name__ == "__main__":
    sys.exit(main())
