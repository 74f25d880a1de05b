"""The public API: ``scrapy_robotrules.__all__``, the one version, the typed choices.

What semantic versioning covers (CHANGES.rst) is ``__all__``: every name in
it resolves, every object the documentation names is in it, and the crawl
layer's among them is still loaded only on first access.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import scrapy_robotrules

ROOT = Path(__file__).resolve().parents[1]


def _documents() -> list[Path]:
    """The README, the example project's and any docs page: what users read."""
    found = [ROOT / "README.rst", ROOT / "example_project" / "README.rst"]
    return found + sorted((ROOT / "docs").rglob("*.rst"))


def _named_in(text: str) -> set[str]:
    """Every ``scrapy_robotrules...`` dotted name and every ``from scrapy_robotrules import``."""
    names = set(re.findall(r"\bscrapy_robotrules(?:\.\w+)+", text))
    for imported in re.findall(r"from scrapy_robotrules import ([\w, ]+)", text):
        names.update(f"scrapy_robotrules.{n.strip()}" for n in imported.split(","))
    return names


def _documented_objects() -> dict[str, str]:
    """Each object the documents name (modules left out), by its last name: where named."""
    objects = {}
    for document in _documents():
        for dotted in _named_in(document.read_text(encoding="utf-8")):
            *module, name = dotted.split(".")
            if not (name[:1].isupper() or _is_function(".".join(module), name)):
                continue  # a module, or a setting's value such as a logger's name
            objects[name] = f"{document.relative_to(ROOT)}: {dotted}"
    return objects


def _is_function(module: str, name: str) -> bool:
    try:
        value = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return False
    return callable(value) and not isinstance(value, type)


def test_every_public_name_resolves() -> None:
    missing = [name for name in scrapy_robotrules.__all__ if not hasattr(scrapy_robotrules, name)]
    assert missing == []
    assert len(set(scrapy_robotrules.__all__)) == len(scrapy_robotrules.__all__)


def test_the_scrapy_layer_is_public() -> None:
    assert set(scrapy_robotrules._SCRAPY_LAYER) <= set(scrapy_robotrules.__all__)


def test_every_object_the_documents_name_is_public() -> None:
    documented = _documented_objects()
    assert {"Addon", "RobotsTxt", "RobotRules", "RobotParser"} <= set(documented)
    unlisted = {
        where
        for name, where in documented.items()
        if name not in scrapy_robotrules.__all__ and name not in EXTRAS
    }
    assert unlisted == set()


EXTRAS = {"RobotRulesMonitorSuite"}
"""Public names of an optional extra, at home in its own module (``crawl.monitors``,
``scrapy-robotrules[spidermon]``): in ``__all__`` they would break ``import *`` without it."""


def test_an_extras_names_live_where_the_docs_say() -> None:
    from scrapy_robotrules.crawl import monitors

    assert set(monitors.__all__) >= EXTRAS


def test_importing_the_package_loads_no_scrapy() -> None:
    code = (
        "import sys, scrapy_robotrules\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted'))\n"
        "assert not loaded, loaded\n"
        "scrapy_robotrules.Addon\n"
        "assert 'scrapy' in sys.modules\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_one_version_the_installed_distributions() -> None:
    # setup.cfg reads the version from scrapy_robotrules/__init__.py.
    assert importlib.metadata.version("scrapy-robotrules") == scrapy_robotrules.__version__


def test_setup_cfg_writes_no_version_of_its_own() -> None:
    setup = (ROOT / "setup.cfg").read_text(encoding="utf-8")
    assert "version = attr: scrapy_robotrules.__version__" in setup


def test_a_misspelt_choice_is_refused_by_the_type_checker_and_at_run_time() -> None:
    # The choices are Literal types: mypy --strict, which checks the tests in
    # .ci/static, refuses these calls, and would call the ignores unused if it
    # took them.
    robots = scrapy_robotrules.RobotsTxt.parse(b"", url="https://example.com/robots.txt")
    assert robots.allowed("/", "bot", precedence="most-specific", agent_match="token")
    with pytest.raises(ValueError, match="precedence must be one of"):
        robots.allowed("/", "bot", precedence="most_specific")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="agent_match must be one of"):
        robots.explain("/", "bot", agent_match="tokens")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="precedence must be one of"):
        scrapy_robotrules.RobotRules("bot", precedence="first_match")  # type: ignore[arg-type]


def test_an_untyped_caller_gets_a_clear_error() -> None:
    robots = scrapy_robotrules.RobotsTxt.parse(b"", url="https://example.com/robots.txt")
    untyped: Any = "most_specific"
    with pytest.raises(ValueError, match="precedence must be one of"):
        robots.allowed("/", "bot", precedence=untyped)
    with pytest.raises(ValueError, match="agent_match must be one of"):
        robots.explain("/", "bot", agent_match=untyped)
    with pytest.raises(ValueError, match="precedence must be one of"):
        scrapy_robotrules.RobotRules("bot", precedence=untyped)


def test_dir_lists_the_public_names_and_dunders_only() -> None:
    listed = dir(scrapy_robotrules)
    assert {"TYPE_CHECKING", "annotations"}.isdisjoint(listed)
    plain = {name for name in listed if not name.startswith("__")}
    assert plain == set(scrapy_robotrules.__all__)
    assert {"__version__", "__all__", "__doc__"} <= set(listed)
