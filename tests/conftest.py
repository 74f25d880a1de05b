"""Shared pytest wiring: the mock server fixture, and the shared/ data every run needs."""

from __future__ import annotations

import pytest
from crawling import mockserver_fixture  # noqa: F401  (the ``mockserver`` fixture)
from redisserver import redis_server  # noqa: F401  (a real Redis server per test)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that runs a real crawl, so CI can rerun them under the other reactor."""
    for item in items:
        module = getattr(item, "module", None)
        if "mockserver" in getattr(item, "fixturenames", ()) or getattr(
            module, "CRAWL_TESTS", False
        ):
            item.add_marker(pytest.mark.crawl)
