"""The layout rule of both layers: each module says what it holds, under a name of its own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import scrapy_robotrules

PACKAGE = Path(scrapy_robotrules.__file__).resolve().parent
ENGINE = PACKAGE / "engine"
CRAWL = PACKAGE / "crawl"
MODULES = sorted([*ENGINE.rglob("*.py"), *CRAWL.rglob("*.py")])


def test_both_floors_are_found() -> None:
    names = {path.relative_to(PACKAGE).as_posix() for path in MODULES}
    assert {
        "engine/robots/precedence.py",
        "engine/robots/robotstxt.py",
        "engine/robots/rule_index.py",
        "engine/robots/hostile/literals.py",
        "engine/usage/preferences.py",
        "crawl/manager.py",
        "crawl/middleware.py",
        "crawl/extension.py",
        "crawl/pacing/politeness.py",
    } <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_a_module_says_what_it_holds(path: Path) -> None:
    # Modules are split where their jobs part, not at a length: no line cap here.
    text = path.read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(text))
    assert docstring, "a module starts with a docstring saying what it is for"


def test_no_two_modules_share_a_name() -> None:
    # A name says what a module is for, once: ``audit`` or ``cli`` twice means
    # a reader must look at the folder to know which one is meant.
    seen: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(path.stem, []).append(path.relative_to(PACKAGE).as_posix())
    shared = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not shared, shared


def test_the_manager_reaches_no_private_name_of_its_parts() -> None:
    # The tdmrep.json fetches and the manager use the parts' public names only.
    for name in ("manager.py", "fetching/tdmrep_files.py"):
        tree = ast.parse((CRAWL / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "scrapy_robotrules.crawl"
            ):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{name} imports {private} from {node.module}"


PERFORMANCE_TESTS = sorted((Path(__file__).parent / "performance").glob("test_*.py"))


@pytest.mark.parametrize("path", PERFORMANCE_TESTS, ids=lambda p: p.name)
def test_a_performance_test_says_what_cost_it_bounds_and_is_marked(path: Path) -> None:
    # ``pytest -m performance`` selects these: work and memory bounded in
    # units of work, never timed.
    text = path.read_text(encoding="utf-8")
    assert ast.get_docstring(ast.parse(text)), "a module docstring says what cost it bounds"
    assert "\npytestmark = pytest.mark.performance\n" in text


IMPORT_PATH_EDIT = re.compile(r"\bsys\.path\s*(\.(insert|append|extend)\b|\[|\+=|=)")
"""A change of the import path: its ``insert``, ``append``, ``extend``, slices or assignment."""


def test_tests_and_benchmarks_import_their_helpers_as_packages() -> None:
    # ``tests.helpers`` and ``benchmarks`` are packages run from the repository
    # root: no module reaches for another by editing the import path.
    root = PACKAGE.parent
    edits = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("tests", "benchmarks")
        for path in sorted((root / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if IMPORT_PATH_EDIT.search(line.split("#", 1)[0])
    ]
    assert not edits, edits
