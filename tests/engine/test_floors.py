"""The two floors: the engine imports nothing from Scrapy, Twisted or w3lib.

lxml neither, but in the module that reads HTML with it (``page/html.py``),
on the first page read.

Checked twice: by reading every import statement of every engine module
(those inside functions too, which a plain import would not run), and by
importing the whole engine in a fresh interpreter, which is what a user of
``RobotsTxt`` alone pays.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import scrapy_robotrules.engine

ENGINE = Path(scrapy_robotrules.engine.__file__).resolve().parent
FORBIDDEN = ("scrapy", "twisted", "w3lib", "parsel", "lxml", "itemadapter")
HTML_PARSER = ("page/html.py", "lxml")
"""The one engine module that may import lxml, the package's own dependency for reading HTML
(``setup.cfg``): it imports it on the first page read, so importing the engine still loads none."""


def engine_modules() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def package_of(path: Path) -> list[str]:
    return ["scrapy_robotrules", "engine", *path.relative_to(ENGINE).parent.parts]


def imported_names(text: str, package: list[str]) -> set[str]:
    """Every module ``text`` imports, relative imports resolved against ``package``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            found.add(".".join([*base, *filter(None, [node.module])]))
    return found


def outside_the_engine(names: set[str]) -> set[str]:
    return {
        name
        for name in names
        if name.split(".")[0] in FORBIDDEN
        or (
            name.startswith("scrapy_robotrules.")
            and not name.startswith("scrapy_robotrules.engine")
        )
    }


@pytest.mark.parametrize("path", engine_modules(), ids=lambda p: str(p.relative_to(ENGINE)))
def test_no_engine_module_imports_scrapy_or_the_crawl_layer(path: Path) -> None:
    names = imported_names(path.read_text(encoding="utf-8"), package_of(path))
    if path.relative_to(ENGINE).as_posix() == HTML_PARSER[0]:
        names.discard(HTML_PARSER[1])
    assert outside_the_engine(names) == set()


def test_the_reader_sees_relative_and_late_imports() -> None:
    text = (
        "from ...crawl import compat\nfrom ..usage.tdmrep import x\ndef f():\n    import scrapy\n"
    )
    names = imported_names(text, ["scrapy_robotrules", "engine", "stores"])
    assert names == {"scrapy_robotrules.crawl", "scrapy_robotrules.engine.usage.tdmrep", "scrapy"}
    assert outside_the_engine(names) == {"scrapy_robotrules.crawl", "scrapy"}


def test_importing_the_whole_engine_loads_no_scrapy() -> None:
    names = sorted(
        ".".join(
            ("scrapy_robotrules", "engine", *p.relative_to(ENGINE).with_suffix("").parts)
        ).removesuffix(".__init__")
        for p in engine_modules()
    )
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
