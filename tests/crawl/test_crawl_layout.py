"""The crawl layer's layout rule: small modules, each saying what it is for and its SPEC."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import scrapy_robotrules.crawl

CRAWL = Path(scrapy_robotrules.crawl.__file__).resolve().parent
MODULES = sorted(CRAWL.rglob("*.py"))
MAX_LINES = 400


def test_the_crawl_layer_is_found() -> None:
    names = {path.relative_to(CRAWL).as_posix() for path in MODULES}
    assert {"manager.py", "middleware.py", "extension.py", "politeness.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(CRAWL).as_posix())
def test_a_module_is_small_and_says_what_it_holds(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_LINES, f"{path.name}: split it by job"
    docstring = ast.get_docstring(ast.parse(text))
    assert docstring, "a module starts with a docstring saying what it is for"
    # Which SPEC sections it holds, or that it holds none.
    assert "SPEC" in docstring, docstring


def test_the_manager_reaches_no_private_name_of_its_parts() -> None:
    # tdmrepfetch and the manager use the parts' public names only.
    for name in ("manager.py", "tdmrepfetch.py"):
        tree = ast.parse((CRAWL / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{name} imports {private} from .{node.module}"
