"""The tables of ``docs/benchmarks.rst`` are written by the benchmarks, between markers."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"
PAGE = REPO_ROOT / "docs" / "benchmarks.rst"


@pytest.fixture
def tables() -> ModuleType:
    from tests.helpers import docs_tables

    return docs_tables


def _recorded_names() -> set[str]:
    found = set()
    for path in BENCHMARKS.glob("*.py"):
        found.update(re.findall(r'\brecord\(\s*"([\w-]+)"', path.read_text(encoding="utf-8")))
    return found


def test_every_table_a_benchmark_records_has_its_markers() -> None:
    names = _recorded_names()
    assert {"engine", "crawl", "fleet", "waiting"} <= names
    page = PAGE.read_text(encoding="utf-8")
    for name in names:
        assert page.count(f".. benchmark-table: {name}\n") == 1, name
        assert page.count(f".. end benchmark-table: {name}\n") == 1, name


FAKE: dict[str, list[Any]] = {
    "headers": ["", "ours", "Protego", "ours/protego"],
    "rows": [["parse 3 files (best of 3)", "1.00 ms", "9.00 ms", "0.111"], ["*a|b_`c", "", "", ""]],
}


def test_a_run_writes_its_tables_between_their_markers(tables: ModuleType, tmp_path: Path) -> None:
    import docutils.core

    page = tmp_path / "benchmarks.rst"
    page.write_text(PAGE.read_text(encoding="utf-8"), encoding="utf-8")
    before = page.read_text(encoding="utf-8")
    tables.record("engine", FAKE["headers"], [*FAKE["rows"][:1], None, *FAKE["rows"][1:]])
    written = tables.write_tables(tables.recorded(), "python -m benchmarks.engine", page, "DAY")
    after = page.read_text(encoding="utf-8")
    assert written == ["engine"]
    start = after.index(".. benchmark-table: engine\n")
    end = after.index(".. end benchmark-table: engine\n")
    table = after[start:end]
    assert "   * - parse 3 files (best of 3)\n     - 1.00 ms\n     - 9.00 ms\n     - 0.111" in table
    assert "Written by ``python -m benchmarks.engine`` on DAY." in table
    assert "109 ms" not in table  # the figures there before are gone
    # Nothing else on the page changed.
    old_start = before.index(".. benchmark-table: engine\n")
    old_end = before.index(".. end benchmark-table: engine\n")
    assert after[:start] == before[:old_start]
    assert after[end:] == before[old_end:]
    # Written again, the same page; and the table is valid reStructuredText.
    tables.write_tables(tables.recorded(), "python -m benchmarks.engine", page, "DAY")
    assert page.read_text(encoding="utf-8") == after
    errors = io.StringIO()
    docutils.core.publish_doctree(
        table, settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": errors}
    )
    assert errors.getvalue() == ""


def test_a_saved_result_is_written_later(
    tables: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "benchmarks.rst"
    page.write_text(".. benchmark-table: fleet\n\nold\n\n.. end benchmark-table: fleet\n")
    result = tmp_path / "fleet.json"
    data = {"command": "python -m benchmarks.fleet", "docs_tables": {"fleet": FAKE}}
    result.write_text(json.dumps(data))
    monkeypatch.setattr(tables, "DOCS_PAGE", page)
    assert tables.main([str(result)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "old" not in text
    assert "``python -m benchmarks.fleet (fleet.json)``" in text


def test_a_table_without_markers_changes_nothing(tables: ModuleType, tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.rst"
    page.write_text(".. benchmark-table: engine\n\nold\n\n.. end benchmark-table: engine\n")
    with pytest.raises(ValueError, match="no markers for the table 'nowhere'"):
        tables.write_tables({"engine": FAKE, "nowhere": FAKE}, "x", page)
    assert "old" in page.read_text(encoding="utf-8")
