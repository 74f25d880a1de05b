"""The benchmark tables of the documentation, written by the benchmarks themselves.

Here, not in ``benchmarks/``, so that ``tests/test_benchmark_docs.py``
checks the writing without importing a benchmark.

Each table of ``docs/benchmarks.rst`` sits between two comment lines::

    .. benchmark-table: engine

    (the table)

    .. end benchmark-table: engine

A report function :func:`record` s each table it prints under its name; a
run with ``--write-docs`` then replaces what is between the markers of each
recorded table with that table (a ``list-table``) and a line saying which
command wrote it, and when. A run's ``--json`` result keeps the same tables
under ``docs_tables``, so that a saved result can be written later::

    python -m tests.helpers.docs_tables RESULT.json

No figure of those tables is typed by hand.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.helpers import REPO_ROOT

DOCS_PAGE = REPO_ROOT / "docs" / "benchmarks.rst"

_RECORDED: dict[str, dict[str, Any]] = {}
"""The tables this run printed, by name: ``{"headers": [...], "rows": [[...], ...]}``."""


def record(name: str, headers: Sequence[str], rows: Sequence[Sequence[str] | None]) -> None:
    """Keep the table ``name`` as printed (separator rows, ``None``, left out)."""
    kept = [list(row) for row in rows if row is not None]
    _RECORDED[name] = {"headers": list(headers), "rows": kept}


def recorded() -> dict[str, dict[str, Any]]:
    """Every table recorded so far, for a ``--json`` result's ``docs_tables``."""
    return dict(_RECORDED)


def _cell(text: str) -> str:
    # Backslash-escape what reStructuredText would read as markup.
    return re.sub(r"([\\`*_|])", r"\\\1", text.strip())


def list_table(table: dict[str, Any]) -> str:
    """The table as a reStructuredText ``list-table``."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [table["headers"], *table["rows"]]:
        cells = [_cell(str(cell)) for cell in row]
        lines.append(f"   * - {cells[0]}".rstrip())
        lines.extend(f"     - {cell}".rstrip() for cell in cells[1:])
    return "\n".join(lines)


def replace_table(page: str, name: str, body: str) -> str:
    """``page`` with what stands between the markers of table ``name`` replaced by ``body``."""
    start = f".. benchmark-table: {name}\n"
    end = f".. end benchmark-table: {name}\n"
    begin = page.find(start)
    finish = page.find(end, begin + len(start)) if begin >= 0 else -1
    if begin < 0 or finish < 0:
        raise ValueError(f"no markers for the table {name!r} ({start.strip()} ... {end.strip()})")
    return page[: begin + len(start)] + "\n" + body.rstrip("\n") + "\n\n" + page[finish:]


def write_tables(
    tables: dict[str, dict[str, Any]],
    source: str,
    page: Path | None = None,
    when: str | None = None,
) -> list[str]:
    """Write ``tables`` into the page, each with a line naming ``source``: the names written.

    Every table is placed before the page is written, so a missing marker
    leaves the page as it was.
    """
    page = page or DOCS_PAGE
    day = when or time.strftime("%Y-%m-%d")
    text = page.read_text(encoding="utf-8")
    for name, table in tables.items():
        body = f"{list_table(table)}\n\nWritten by ``{source}`` on {day}."
        text = replace_table(text, name, body)
    page.write_text(text, encoding="utf-8")
    return list(tables)


def write_recorded(source: str) -> None:
    """``--write-docs``: write every table this run recorded."""
    names = write_tables(recorded(), source)
    print(f"tables written to {DOCS_PAGE.name}: {', '.join(names)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the tables of saved ``--json`` results into the documentation."""
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m tests.helpers.docs_tables RESULT.json...", file=sys.stderr)
        return 2
    for path in paths:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        tables = data.get("docs_tables")
        if not tables:
            print(f"{path}: no docs_tables in this result", file=sys.stderr)
            return 1
        names = write_tables(tables, f"{data.get('command', 'a benchmark')} ({Path(path).name})")
        print(f"{path}: {', '.join(names)} written to {DOCS_PAGE.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
