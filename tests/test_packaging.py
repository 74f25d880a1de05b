"""The package on its own: the sdist and the wheel, tox.ini mirroring .ci/run, pinned checks.

The sdist is the repository a contributor needs (the tests with their
helpers and data, the example project, the benchmarks, .ci/), so the
README's two commands run from it unpacked; the wheel holds the package and
``py.typed`` only. ``.ci/package`` installs both and runs the example crawl
from them; these tests read the archives, built once for the module.
"""

from __future__ import annotations

import configparser
import re
import shlex
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _built(directory: Path) -> tuple[Path, Path]:
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(directory), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    (sdist,) = directory.glob("*.tar.gz")
    (wheel,) = directory.glob("*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sdist and the wheel, built once for the module."""
    return _built(tmp_path_factory.mktemp("dist"))


def _sdist_files(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:
        # Without the top directory, scrapy_robotrules-X.Y.Z/.
        return {
            name.partition("/")[2]
            for name in archive.getnames()
            if archive.getmember(name).isfile()
        }


def _wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_the_sdist_holds_what_the_readmes_commands_need(archives: tuple[Path, Path]) -> None:
    files = _sdist_files(archives[0])
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    if tracked:  # from a git checkout: every tracked file but .gitignore
        assert set(tracked) - files == {".gitignore"}
    assert {
        ".ci/run",
        ".ci/package",
        "tox.ini",
        "CHANGES.rst",
        "README.rst",
        "LICENSE",
        "tests/conftest.py",
        "tests/helpers/mockserver.py",
        "tests/helpers/crawling.py",
        "tests/data/vectors.txt",
        "tests/data/corpus.tar.gz",
        "example_project/scrapy.cfg",
        "example_project/robots.txt",
        "example_project/demo_project/spiders/demo.py",
        "benchmarks/engine.py",
        "scrapy_robotrules/py.typed",
    } <= files
    assert not [name for name in files if "__pycache__" in name or name.endswith(".pyc")]


def test_the_wheel_holds_the_package_only(archives: tuple[Path, Path]) -> None:
    files = _wheel_files(archives[1])
    outside = {name.split("/")[0] for name in files} - {"scrapy_robotrules"}
    assert all(name.endswith(".dist-info") for name in outside), outside
    assert "scrapy_robotrules/py.typed" in files
    assert "scrapy_robotrules/crawl/middleware.py" in files
    assert not [name for name in files if name.startswith("tests/") or name.endswith(".pyc")]


def _metadata(wheel: Path) -> str:
    """The wheel's METADATA, what a package index shows."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return archive.read(name).decode()


def test_the_metadata_says_what_pypi_shows(archives: tuple[Path, Path]) -> None:
    import scrapy_robotrules

    metadata = _metadata(archives[1])
    assert f"Version: {scrapy_robotrules.__version__}\n" in metadata
    classifiers = set(re.findall(r"^Classifier: (.+)$", metadata, re.MULTILINE))
    assert {
        "Development Status :: 5 - Production/Stable",
        "Framework :: Scrapy",
        "Typing :: Typed",
        *(f"Programming Language :: Python :: 3.{minor}" for minor in _tested_minors()),
    } <= classifiers
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, archives)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_metadata_links_home_documentation_and_changelog(
    archives: tuple[Path, Path],
) -> None:
    urls = dict(re.findall(r"^Project-URL: ([^,]+), (\S+)$", _metadata(archives[1]), re.M))
    assert {"Homepage", "Documentation", "Changelog"} <= set(urls), urls
    assert [url for url in urls.values() if not url.startswith("https://")] == []
    # The changelog is the documentation's page of CHANGES.rst; README links
    # to the same site.
    documentation = urls["Documentation"]
    assert urls["Changelog"].startswith(documentation)
    assert urls["Changelog"].endswith("/changes.html")
    assert (ROOT / "docs" / "changes.rst").is_file()
    assert documentation in (ROOT / "README.rst").read_text(encoding="utf-8")


def _tested_minors() -> set[int]:
    """The Python 3 minor versions .ci/run asks for (``interpreter 3.N``)."""
    return {int(m) for m in re.findall(r"interpreter 3\.(\d+)", _ci_run())}


def _ci_run() -> str:
    return (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _tox() -> configparser.ConfigParser:
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "tox.ini", encoding="utf-8")
    return config


def _tox_pytest_commands() -> dict[str, list[list[str]]]:
    """Each tox environment's pytest commands, as argument lists without ``{posargs}``."""
    config = _tox()
    found = {}
    for section in config.sections():
        if section.startswith("testenv"):
            lines = config[section].get("commands", "").strip().splitlines()
            commands = [shlex.split(line)[1:-1] for line in lines if line.startswith("pytest ")]
            found[section.partition(":")[2] or "py313"] = commands
    return found


def test_tox_has_an_environment_for_each_step_of_ci() -> None:
    steps = [shlex.split(args) for args in re.findall(r"-m pytest ?(.*)$", _ci_run(), re.MULTILINE)]
    assert len(steps) >= 6
    in_tox = [command for commands in _tox_pytest_commands().values() for command in commands]
    assert [step for step in steps if step not in in_tox] == []
    envs = _tox()["tox"]["envlist"].split()
    assert {f"py3{minor}" for minor in _tested_minors()} <= set(envs)
    assert "packaging" in envs
    assert "bash .ci/package" in _tox()["testenv:packaging"]["commands"]
    assert "bash .ci/package" in _ci_run()


def test_toxs_oldest_scrapy_is_setup_cfgs_floor() -> None:
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg", encoding="utf-8")
    (floor,) = re.findall(r"^scrapy>=([\d.]+)$", setup["options"]["install_requires"], re.MULTILINE)
    assert _tox()["testenv:py310-oldest-scrapy"]["deps"].split() == [f"scrapy=={floor}"]


def _static_pins() -> dict[str, str]:
    """The static checks' tools and their versions, from .ci/static-requirements.txt."""
    text = (ROOT / ".ci" / "static-requirements.txt").read_text(encoding="utf-8")
    lines = [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]
    pins = dict(line.split("==") for line in lines)
    assert len(pins) == len(lines), f"every tool is pinned with ==: {lines}"
    return pins


def test_the_static_checks_are_a_ci_step_of_their_own_with_pinned_tools() -> None:
    assert set(_static_pins()) == {"mypy", "ruff"}
    assert re.search(r"^timed bash \.ci/static \.venv$", _ci_run(), re.MULTILINE)
    static = (ROOT / ".ci" / "static").read_text(encoding="utf-8")
    assert "-r .ci/static-requirements.txt" in static
    for check in ("ruff check .", "ruff format --check .", "mypy\n"):
        assert f"-m {check}" in static
    assert "bash .ci/static" in _tox()["testenv:static"]["commands"]


def test_pre_commits_ruff_is_the_one_ci_pins() -> None:
    config = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    (rev,) = re.findall(r"ruff-pre-commit\n\s+rev: v(\S+)", config)
    assert rev == _static_pins()["ruff"]
