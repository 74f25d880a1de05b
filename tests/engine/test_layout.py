"""The engine's layout rule: small modules, each saying what it is for and which SPEC it holds."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import scrapy_robotrules.engine

ENGINE = Path(scrapy_robotrules.engine.__file__).resolve().parent
MODULES = sorted(ENGINE.rglob("*.py"))
MAX_LINES = 400


def test_the_engine_is_found() -> None:
    names = {path.relative_to(ENGINE).as_posix() for path in MODULES}
    assert {"precedence.py", "robotstxt.py", "index/rules.py", "usage/preferences.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ENGINE).as_posix())
def test_a_module_is_small_and_says_what_it_holds(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_LINES, f"{path.name}: split it by job"
    docstring = ast.get_docstring(ast.parse(text))
    assert docstring, "a module starts with a docstring saying what it is for"
    # Which SPEC sections it holds, or that it holds none.
    assert "SPEC" in docstring, docstring
