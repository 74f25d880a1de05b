"""Shared test helpers: servers, crawls, reference parsers, test data.

No test module is imported by another; what several need lives here.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The checkout: where setup.cfg, README.rst and example_project are."""
DATA_DIR = REPO_ROOT / "tests" / "data"
"""The repository's own test data (vectors, corpus subset)."""
