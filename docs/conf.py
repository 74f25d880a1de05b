"""Sphinx configuration: the documentation of scrapy-robotrules.

Built with warnings as errors (``tests/test_docs.py`` runs
``sphinx-build -W --keep-going``): a broken reference, a setting the code
reads but the reference lacks, or a docstring that is no valid
reStructuredText fails the tests. The build imports the package (its
version, autodoc, the settings table), so ``docs/requirements.txt``
installs it with its dependencies.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sphinx.errors import ConfigError

DOCS = Path(__file__).resolve().parent
# The checkout's package, whatever version the environment holds, is the one
# documented; its dependencies come from the environment.
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]

try:
    import scrapy  # noqa: F401  (autodoc and the settings reference import the crawl layer)

    import scrapy_robotrules
except ImportError as missing:
    raise ConfigError(
        f"the documentation imports scrapy-robotrules and its dependencies, and"
        f" {missing.name} is missing: run pip install -r docs/requirements.txt"
        f" at the repository's root"
    ) from missing

project = "scrapy-robotrules"
author = "scrapy-robotrules contributors"
copyright = "scrapy-robotrules contributors"
release = scrapy_robotrules.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "robotrules_docs",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "requirements.txt"]

# The behaviour contract (spec.md) is Markdown, as the project's shared copy
# is; its numbered sections get anchors (spec.html#5-precedence-modes), and
# the extension labels them spec-5 for :ref: and the docstrings' "SPEC 5".
myst_heading_anchors = 2

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}

# A literal block (``::``) is shown as it is: most are log lines, shell
# commands, robots.txt files; Python is marked ``.. code-block:: python``.
highlight_language = "none"

html_theme = "furo"
html_title = f"scrapy-robotrules {release}"
autodoc_inherit_docstrings = False  # the package's own docstrings, not Scrapy's
