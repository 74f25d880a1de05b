"""Shared pytest wiring: the mock server fixture, and the shared/ data every run needs."""

from __future__ import annotations

from crawling import mockserver_fixture  # noqa: F401  (the ``mockserver`` fixture)
