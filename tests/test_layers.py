"""The package's layers, read from its import statements, and no import circle anywhere.

Every import statement counts: those under ``TYPE_CHECKING`` and those
inside functions too, which a plain import would not run. The layers run
from the engine's (``scrapy_robotrules.engine``), which import nothing of
Scrapy, up through the crawl's (``scrapy_robotrules.crawl``); a module
imports only from its own layer or the ones below, and within a layer no
circle (checked for the whole package). The engine's layers import nothing
from Scrapy, Twisted or w3lib either (checked again by importing the whole
engine in a fresh interpreter, which is what a user of ``RobotsTxt`` alone
pays). And no module imports Twisted's reactor, which a crawl without one
forbids.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import scrapy_robotrules

PACKAGE = Path(scrapy_robotrules.__file__).resolve().parent
ENGINE = "scrapy_robotrules.engine"
CRAWL = "scrapy_robotrules.crawl"
OUTSIDE_THE_ENGINE = ("scrapy", "twisted", "w3lib", "parsel", "lxml", "itemadapter")
"""What no engine module imports: Scrapy and the libraries that come with it."""
HTML_PARSER = (f"{ENGINE}.page.html", "lxml")
"""The one engine module that may import lxml, the package's own dependency for reading HTML
(``setup.cfg``): it imports it on the first page read, so importing the engine still loads none."""

LAYERS: list[tuple[str, list[str]]] = [
    # The engine's.
    ("shared by the engine", ["engine.digests", "engine.untrusted", "engine.possessive"]),
    ("the rules: robots.txt read and decided", ["engine.robots"]),
    ("page-level rules and usage preferences", ["engine.page", "engine.usage"]),
    # Stores may import the rules; the rules import neither the stores nor the database.
    ("the stores", ["engine.stores"]),
    ("the rules database, over the rules and a store", ["engine.database"]),
    ("the operator's tools", ["engine.operator_tools"]),
    ("the command line", ["engine.cli"]),
    # The crawl's.
    (
        "the crawl's base",
        ["crawl.compat", "crawl.exceptions", "crawl.signals", "crawl.requestmeta"],
    ),
    ("configuration", ["crawl.config"]),
    (
        "reporting, and the parser plug-in it hands to robots_parsed",
        ["crawl.reporting", "crawl.robotparser"],
    ),
    ("pacing", ["crawl.pacing"]),
    ("fetching", ["crawl.fetching"]),
    ("holding requests", ["crawl.holding"]),
    ("deciding", ["crawl.deciding"]),
    ("the coordinator", ["crawl.manager"]),
    ("pages", ["crawl.pages"]),
    (
        "Scrapy-facing",
        [
            "crawl.addon",
            "crawl.extension",
            "crawl.middleware",
            "crawl.monitors",
            "crawl.scheduler",
            "crawl.sitemaps",
        ],
    ),
]
"""Lowest first: modules and packages, named from ``scrapy_robotrules``."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """The package's modules ``name`` imports, wherever the statement sits."""
    return {target for target in every_import_of(name) if target in MODULES} - {name}


def every_import_of(name: str) -> set[str]:
    """Every module ``name`` imports, the package's or not, wherever the statement sits."""
    path = MODULES[name]
    return imported(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")


def imported(text: str, name: str, *, is_package: bool = False) -> set[str]:
    """The modules ``text`` (of module ``name``) imports, relative imports resolved.

    ``from package import name`` counts as importing both ``package`` and
    ``package.name``, which may be a module.
    """
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level else []
            module = ".".join([*base, *filter(None, [node.module])])
            found.update([module, *(f"{module}.{alias.name}" for alias in node.names)])
    return found


def layer_of(name: str) -> int | None:
    """The index in :data:`LAYERS` of module ``name``'s layer."""
    top = ".".join(name.split(".")[1:3])
    for index, (_, members) in enumerate(LAYERS):
        if top in members:
            return index
    return None


LAYERED_MODULES = sorted(
    name
    for name in MODULES
    if name.startswith((ENGINE + ".", CRAWL + ".")) and name.count(".") >= 2
)
ENGINE_MODULES = sorted(name for name in MODULES if name.startswith(ENGINE))


def test_every_module_of_the_engine_and_the_crawl_has_a_layer() -> None:
    assert [name for name in LAYERED_MODULES if layer_of(name) is None] == []


def test_at_most_a_dozen_modules_sit_directly_in_crawl() -> None:
    direct = [p for p in (PACKAGE / "crawl").glob("*.py") if p.name != "__init__.py"]
    assert len(direct) <= 12, sorted(p.name for p in direct)


def upward(name: str, targets: set[str]) -> dict[str, str]:
    """Of the modules ``targets`` that ``name`` imports, those in a higher layer: their layer."""
    own = layer_of(name)
    assert own is not None, f"{name} is in no layer"
    found = {}
    for target in targets:
        theirs = layer_of(target)
        if theirs is not None and theirs > own:
            found[target] = LAYERS[theirs][0]
    return found


@pytest.mark.parametrize("name", LAYERED_MODULES)
def test_no_import_reaches_up_a_layer(name: str) -> None:
    found = upward(name, imports_of(name))
    assert found == {}, f"{name} ({LAYERS[layer_of(name) or 0][0]}) imports from above"


def test_an_import_pointing_the_wrong_way_is_found() -> None:
    # The stores may import the rules, the database both; the rules import
    # neither, and no engine module imports the crawl's.
    rules, stores, database = (
        f"{ENGINE}.robots.groups",
        f"{ENGINE}.stores.cache",
        f"{ENGINE}.database",
    )
    assert upward(stores, {rules}) == upward(database, {rules, stores}) == {}
    assert set(upward(rules, {stores, database, f"{CRAWL}.compat"})) == {
        stores,
        database,
        f"{CRAWL}.compat",
    }
    assert set(upward(stores, {database})) == {database}


def outside_the_engine(names: set[str]) -> set[str]:
    """Of ``names``, those no engine module imports: Scrapy and its kin, the crawl's modules."""
    return {
        name
        for name in names
        if name.split(".")[0] in OUTSIDE_THE_ENGINE
        # The package itself (its version, its public names) is in no layer.
        or (name in MODULES and name.startswith(CRAWL))
    }


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_no_engine_module_imports_scrapy_or_the_crawl_layer(name: str) -> None:
    names = every_import_of(name)
    if name == HTML_PARSER[0]:
        names = {each for each in names if each.split(".")[0] != HTML_PARSER[1]}
    assert outside_the_engine(names) == set()


def test_importing_the_whole_engine_loads_no_scrapy() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {ENGINE_MODULES!r}:\n"
        "    importlib.import_module(name)\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {OUTSIDE_THE_ENGINE!r})\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


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
    assert found & set(MODULES) == {CRAWL, f"{CRAWL}.manager", f"{CRAWL}.scheduler"}


def test_the_reader_sees_relative_and_late_imports() -> None:
    text = (
        "from ...crawl import compat\nfrom ..usage.tdmrep import x\ndef f():\n    import scrapy\n"
    )
    names = imported(text, f"{ENGINE}.stores.cache")
    assert {
        "scrapy_robotrules.crawl",
        "scrapy_robotrules.crawl.compat",
        f"{ENGINE}.usage.tdmrep",
        "scrapy",
    } <= names
    assert outside_the_engine(names) == {
        "scrapy_robotrules.crawl",
        "scrapy_robotrules.crawl.compat",
        "scrapy",
    }


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
