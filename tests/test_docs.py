"""The documentation (``docs/``) builds without a warning and cannot drift from the code.

The settings reference takes every type, default and range from the
settings table when it is built (``docs/_ext/robotrules_docs.py``); these
tests check what is written by hand against the code: one entry per
setting, every stats key the code sets, every public name, the behaviour
contract and the sections the code cites, README's landing page (which a
package index shows alone, so its links are absolute), and a newcomer's
first steps: the install README gives is the docs' too, the documented
build installs what it imports, and log lines are not shown as Python.
"""

from __future__ import annotations

import html
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import scrapy_robotrules
from scrapy_robotrules.crawl.config.table import ATTRIBUTES, TABLE
from tests.helpers import REPO_ROOT
from tests.helpers.emitted_stats import emitted, matches
from tests.helpers.vectors import shared_dir

DOCS = REPO_ROOT / "docs"
DOCS_SITE = "https://scrapy-robotrules.readthedocs.io/en/latest/"
"""Where the documentation is published: README's links go there."""
PACKAGE = REPO_ROOT / "scrapy_robotrules"
SPEC = DOCS / "spec.md"
SPEC_CITED = re.compile(r"\bSPEC (\d+)((?:(?:-|, | and | or )\d+)*)")
"""``SPEC 5``, ``SPEC 1-7``, ``SPEC 5, 7``, ``SPEC 5 and 8``."""


def _text(relative: str) -> str:
    return (DOCS / relative).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTML site, built once for the module with warnings as errors."""
    html = tmp_path_factory.mktemp("docs") / "html"
    try:
        import sphinx  # noqa: F401
    except ImportError:
        pytest.fail("Sphinx is missing: pip install -r docs/requirements.txt")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", DOCS, html],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return html


def test_the_documentation_builds_with_warnings_as_errors(built: Path) -> None:
    settings = (built / "reference" / "settings.html").read_text(encoding="utf-8")
    assert all(f'id="{name.lower().replace("_", "-")}"' in settings for name in TABLE)


def test_the_documented_build_installs_the_package_it_imports() -> None:
    # conf.py and the extension import the package and Scrapy; the documented
    # command (pip install -r docs/requirements.txt, at the root) must install
    # them. pip reads a path in a requirements file from where it runs.
    lines = [
        line.partition("#")[0].strip()
        for line in _text("requirements.txt").splitlines()
        if line.partition("#")[0].strip()
    ]
    paths = [line.removeprefix("-e").strip() for line in lines if line.startswith(("-e", "."))]
    assert [(REPO_ROOT / path).resolve() for path in paths] == [REPO_ROOT], lines
    documented = "pip install -r docs/requirements.txt && sphinx-build docs docs/_build"
    readme = (REPO_ROOT / "README.rst").read_text(encoding="utf-8")
    assert documented in readme
    assert documented in _text("development.rst")
    # The documentation site builds the same way, warnings as errors.
    site = (REPO_ROOT / ".readthedocs.yaml").read_text(encoding="utf-8")
    assert "- requirements: docs/requirements.txt\n" in site
    assert "configuration: docs/conf.py\n" in site
    assert "fail_on_warning: true\n" in site


_BLOCK = re.compile(
    r'<div class="highlight-(\w+) notranslate"><div class="highlight"><pre>(.*?)</pre>', re.S
)
"""A literal block of a built page, and the language Sphinx highlighted it as."""
_LOG_LINE = re.compile(
    r"^(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"  # Scrapy's log format: its timestamp
    r"|\[[\w.]+\] (?:DEBUG|INFO|WARNING|ERROR|CRITICAL):"  # the same without it
    r"|Forbidden by robots\.txt"  # a drop reason
    r"|'robotrules/)"  # the stats dump at close
)
_PYTHON = re.compile(r"^(?:from \w[\w.]* import |import \w|class \w|def \w|[A-Z][A-Z_]+ = )")


def _blocks(built: Path) -> list[tuple[str, str, str]]:
    """(page, language, text) of every literal block of the built site."""
    found = []
    for page in sorted(built.rglob("*.html")):
        for language, body in _BLOCK.findall(page.read_text(encoding="utf-8")):
            text = html.unescape(re.sub(r"<[^>]+>", "", body))
            found.append((page.relative_to(built).as_posix(), language, text))
    return found


def test_log_excerpts_are_not_highlighted_as_python(built: Path) -> None:
    blocks = _blocks(built)
    logs = [(page, language) for page, language, text in blocks if _LOG_LINE.match(text)]
    assert len(logs) >= 4, "the scan finds the log excerpts"
    assert any(page == "getting-started.html" for page, _ in logs)
    assert [(page, language) for page, language in logs if language not in {"none", "text"}] == []
    # The Python snippets stay highlighted: a ``::`` block is shown as it is.
    python = [(page, language) for page, language, text in blocks if _PYTHON.match(text)]
    assert len(python) >= 10, "the scan finds the Python snippets"
    assert [(page, language) for page, language in python if language != "python"] == []


def _readme() -> Any:
    """README's document tree, as a package index renders it: its links resolved."""
    import docutils.core

    return docutils.core.publish_doctree(
        (REPO_ROOT / "README.rst").read_text(encoding="utf-8"),
        settings_overrides={"report_level": 2, "halt_level": 2, "syntax_highlight": "none"},
    )


def test_the_docs_install_as_readme_does(built: Path) -> None:
    from docutils import nodes

    (install,) = [
        section for section in _readme().findall(nodes.section) if section[0].astext() == "Install"
    ]
    commands = [block.astext() for block in install.findall(nodes.literal_block)]
    assert any("@ git+https://" in command for command in commands), "from a VCS URL"
    lines = [line for command in commands for line in command.splitlines()]
    assert "pip install ." in lines, "from a checkout"
    blocks = _blocks(built)
    for shown in ("index.html", "getting-started.html"):
        texts = {text.strip() for page, _, text in blocks if page == shown}
        assert [command for command in commands if command.strip() not in texts] == [], shown
    # Nothing tells a newcomer to install the package from an index it is not on.
    from_index = re.compile(
        r"pip install ['\"]?scrapy-robotrules(?:\[[\w,]+\])?['\"]?(?=\s|$)(?!\s*@)", re.M
    )
    pages = [REPO_ROOT / "README.rst", *sorted(DOCS.rglob("*.rst"))]
    said = [page.name for page in pages if from_index.search(page.read_text(encoding="utf-8"))]
    assert said == []


def test_every_setting_of_the_table_has_one_entry_and_no_other() -> None:
    page = _text("reference/settings.rst")
    entries = re.findall(r"^\.\. robotrules-setting:: (\S+)$", page, re.M)
    assert sorted(entries) == sorted(TABLE), "one .. robotrules-setting:: entry per setting"
    assert len(entries) == len(set(entries))
    assert ".. robotrules-spider-attributes::" in page
    assert set(ATTRIBUTES.values()) <= set(TABLE)


def test_an_entry_shows_the_tables_type_default_and_range() -> None:
    # The extension as Sphinx loads it (conf.py names its folder), not as a package.
    spec = importlib.util.spec_from_file_location(
        "robotrules_docs", DOCS / "_ext" / "robotrules_docs.py"
    )
    assert spec is not None
    assert spec.loader is not None
    robotrules_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(robotrules_docs)
    from docutils.statemachine import StringList

    def shown(name: str) -> str:
        return "\n".join(robotrules_docs.entry(TABLE[name], StringList(["Meaning."])))

    assert ":Default: ``5``\n:Range: more than 0, at most 600" in shown("ROBOTRULES_RETRY_DELAY")
    assert ":Range: 0 to 604,800 (a week)" in shown("ROBOTRULES_UNREACHABLE_TIMEOUT")
    assert ":Default: ``536870912`` (512 MiB)" in shown("ROBOTRULES_CACHE_BYTES")
    assert "one of ``'most-specific'``, ``'first-match'`` or ``'allow-first'``" in shown(
        "ROBOTRULES_PRECEDENCE"
    )
    assert ":Range:" not in shown("ROBOTRULES_STORE")
    assert all(row.kind for row in TABLE.values()), "every row says what kind of value it takes"


def _stats_documented() -> set[str]:
    return set(re.findall(r"``((?:robotrules|robotstxt)/[^`]+)``", _text("reference/stats.rst")))


def _stats_emitted() -> set[str]:
    paths = sorted((PACKAGE / "crawl").rglob("*.py"))
    return emitted([*paths, PACKAGE / "engine" / "stores" / "cache.py"])


def test_the_stats_are_read_from_the_code() -> None:
    keys = _stats_emitted()
    assert {"robotrules/offered", "robotrules/store/hits", "robotrules/usage/tdmrep/broken"} <= keys
    assert "robotrules/page/directive/{}" in keys
    assert "robotrules/page/other_crawler" in keys  # a loop over a literal tuple
    assert "robotrules/policy/custom" in keys  # one arm of a conditional
    assert "{}items/unmarked" in keys  # a key held in a variable, its prefix an attribute


def test_every_stat_the_code_sets_is_on_the_stats_page() -> None:
    documented = _stats_documented()
    missing = {key for key in _stats_emitted() if not any(matches(key, d) for d in documented)}
    assert missing == set(), "add them to docs/reference/stats.rst"


def test_the_stats_page_lists_no_stat_the_code_does_not_set() -> None:
    keys = _stats_emitted()
    stale = {d for d in _stats_documented() if not any(matches(key, d) for key in keys)}
    assert stale == set()


def test_every_public_name_is_in_the_api_reference() -> None:
    api = _text("reference/api.rst")
    names = [*scrapy_robotrules.__all__, *scrapy_robotrules._SCRAPY_LAYER]
    directive = r"^\.\. (?:auto\w+|py:data):: scrapy_robotrules\.(\w+)$"
    documented = set(re.findall(directive, api, re.M))
    assert sorted(set(names) - documented) == []
    assert sorted(documented - set(names)) == [], "only the top-level names are documented"


def _spec_sections() -> set[int]:
    return {int(n) for n in re.findall(r"^## (\d+)\. ", SPEC.read_text(encoding="utf-8"), re.M)}


def test_every_spec_section_the_code_cites_is_in_the_contract() -> None:
    cited: dict[int, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for first, more in SPEC_CITED.findall(path.read_text(encoding="utf-8")):
            numbers = [int(first), *map(int, re.findall(r"\d+", more))]
            if "-" in more:  # a range, SPEC 1-7
                numbers = list(range(numbers[0], numbers[-1] + 1))
            for number in numbers:
                cited.setdefault(number, set()).add(path.relative_to(REPO_ROOT).as_posix())
    assert len(cited) >= 8, "the scan finds the citations"
    assert {n: where for n, where in cited.items() if n not in _spec_sections()} == {}


def test_the_contract_is_the_shared_one() -> None:
    if not shared_dir().is_dir():
        pytest.skip(f"no shared directory beside the repository ({shared_dir().name}/)")
    # shared/ is there, so its SPEC.md must be too, and equal ours byte for byte.
    assert SPEC.read_bytes() == (shared_dir() / "SPEC.md").read_bytes(), (
        "docs/spec.md differs from shared/SPEC.md: copy it again"
    )


def test_readme_is_a_landing_page() -> None:
    readme = (REPO_ROOT / "README.rst").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    example = "cd example_project && ../.venv/bin/scrapy crawl demo"
    assert readme.index(example) < readme.index("bash .ci/run") < readme.index("Install")
    # A package index page shows README alone: a relative link goes nowhere.
    from docutils import nodes

    tree = _readme()
    links = [node["refuri"] for node in tree.findall(nodes.reference) if "refuri" in node]
    assert [link for link in links if not link.startswith("https://")] == []
    assert not [node for node in tree.findall(nodes.reference) if "refname" in node]
    # Its links into the documentation name pages the site has.
    site = re.compile(re.escape(DOCS_SITE) + r"([\w/-]+)\.html")
    pages = {found[1] for link in links if (found := site.fullmatch(link))}
    assert {"getting-started", "reference/settings", "changes"} <= pages
    sources = {path.relative_to(DOCS).with_suffix("").as_posix() for path in DOCS.rglob("*.*")}
    assert sorted(pages - sources) == []
