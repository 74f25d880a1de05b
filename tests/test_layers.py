"""The layers of the Scrapy floor, and no import circle anywhere in the package.

Every import statement counts: those under ``TYPE_CHECKING`` and those inside
functions too, which a plain import would not run. A module imports only from
its own layer or the ones below; within a layer, no circle (checked for the
whole package). And no module imports Twisted's reactor, which a crawl
without one forbids.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import scrapy_robotrules

PACKAGE = Path(scrapy_robotrules.__file__).resolve().parent
CRAWL = "scrapy_robotrules.crawl"

LAYERS: list[tuple[str, list[str]]] = [
    ("base: no part of the floor", ["compat", "exceptions", "signals", "requestmeta"]),
    ("configuration", ["config"]),
    ("reporting, and the parser plug-in it hands to robots_parsed", ["reporting", "robotparser"]),
    ("pacing", ["pacing"]),
    ("fetching", ["fetching"]),
    ("holding requests", ["holding"]),
    ("deciding", ["deciding"]),
    ("the coordinator", ["manager"]),
    ("pages", ["pages"]),
    ("Scrapy-facing", ["addon", "extension", "middleware", "monitors", "scheduler", "sitemaps"]),
]
"""Lowest first: ``crawl.<name>`` modules and packages. The engine sits below them all."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """The package's modules ``name`` imports, wherever the statement sits."""
    path = MODULES[name]
    return imported(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")


def imported(text: str, name: str, *, is_package: bool = False) -> set[str]:
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level else []
            module = ".".join([*base, *filter(None, [node.module])])
            # ``from package import module`` imports the module.
            targets = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(target for target in targets if target in MODULES)
    found.discard(name)
    return found


def layer_of(name: str) -> int | None:
    if not name.startswith(CRAWL + "."):
        return None
    top = name.split(".")[2]
    for index, (_, members) in enumerate(LAYERS):
        if top in members:
            return index
    return None


CRAWL_MODULES = sorted(
    name for name in MODULES if name.startswith(CRAWL + ".") and name.count(".") >= 2
)


def test_every_crawl_module_has_a_layer() -> None:
    assert [name for name in CRAWL_MODULES if layer_of(name) is None] == []


def test_at_most_a_dozen_modules_sit_directly_in_crawl() -> None:
    direct = [p for p in (PACKAGE / "crawl").glob("*.py") if p.name != "__init__.py"]
    assert len(direct) <= 12, sorted(p.name for p in direct)


@pytest.mark.parametrize("name", CRAWL_MODULES)
def test_no_import_reaches_up_a_layer(name: str) -> None:
    own = layer_of(name)
    assert own is not None
    upward = {}
    for target in imports_of(name):
        theirs = layer_of(target)
        if theirs is not None and theirs > own:
            upward[target] = LAYERS[theirs][0]
    assert upward == {}, f"{name} ({LAYERS[own][0]}) imports from above"


def test_the_engine_imports_nothing_of_the_crawl_floor() -> None:
    offending = {
        name: sorted(t for t in imports_of(name) if t.startswith(CRAWL))
        for name in MODULES
        if name.startswith("scrapy_robotrules.engine")
    }
    assert {name: found for name, found in offending.items() if found} == {}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), or a self-import."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_in_the_package() -> None:
    # A module naming its own package (``from scrapy_robotrules.crawl import compat``)
    # loads the package first, whose __init__ does not import it back: no circle.
    graph = {
        name: {t for t in imports_of(name) if not name.startswith(t + ".")} for name in MODULES
    }
    assert circles(graph) == []


def test_the_circle_finder_finds_one() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_reader_sees_type_only_and_late_imports() -> None:
    text = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from scrapy_robotrules.crawl.manager import RobotsManager\n"
        "def f():\n    from scrapy_robotrules.crawl import scheduler\n"
    )
    found = imported(text, "scrapy_robotrules.crawl.config.settings")
    assert found == {CRAWL, f"{CRAWL}.manager", f"{CRAWL}.scheduler"}


def test_no_module_of_the_package_imports_the_reactor() -> None:
    # Every module imported with the reactor's import forbidden, as in a crawl without one.
    pytest.importorskip("scrapy.utils.reactorless", reason="Scrapy 2.15+ runs without a reactor")
    code = (
        "import pkgutil, sys, importlib, scrapy_robotrules\n"
        "from scrapy.utils.reactorless import install_reactor_import_hook\n"
        "install_reactor_import_hook()\n"
        "for module in pkgutil.walk_packages(scrapy_robotrules.__path__, 'scrapy_robotrules.'):\n"
        "    if not module.name.endswith('__main__'): importlib.import_module(module.name)\n"
        "assert 'twisted.internet.reactor' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-5000:]
