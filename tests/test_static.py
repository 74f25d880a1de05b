"""What the package ships for typed users, and the project's reST files well formed.

mypy --strict and ruff are not run here: they are a CI step of their own
(``.ci/static``, tool versions pinned), so a new tool release cannot fail
the suite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_package_is_typed() -> None:
    assert (ROOT / "scrapy_robotrules" / "py.typed").is_file()


def _restructuredtext_files() -> list[str]:
    """The project's own .rst files, so a new one is checked without being listed here.

    Not those of ``docs/``: they use Sphinx's roles and directives, which
    docutils alone does not know, and ``tests/test_docs.py`` builds them
    with Sphinx, warnings as errors.
    """
    return sorted(
        path.relative_to(ROOT).as_posix()
        for path in ROOT.rglob("*.rst")
        if not any(
            part.startswith(".") or part.endswith(".egg-info") or part in {"build", "dist"}
            for part in path.relative_to(ROOT).parts[:-1]
        )
        and path.relative_to(ROOT).parts[0] != "docs"
    )


def test_restructuredtext_files_are_found() -> None:
    assert {
        "README.rst",
        "example_project/README.rst",
        "tests/data/README.rst",
        "benchmarks/cpu_per_page.rst",
    } <= set(_restructuredtext_files())


@pytest.mark.parametrize("name", _restructuredtext_files())
def test_restructuredtext_is_well_formed(name: str) -> None:
    # A malformed table or a broken section renders as an error block on PyPI.
    import io

    import docutils.core

    errors = io.StringIO()
    docutils.core.publish_doctree(
        (ROOT / name).read_text(encoding="utf-8"),
        settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": errors},
    )
    assert errors.getvalue() == ""
