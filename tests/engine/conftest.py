"""Fixtures of the store tests: each backend kind, on a real SQLite file or Redis server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.redisserver import RedisServer

from scrapy_robotrules.engine.stores import Backend, open_backend


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite://{tmp_path}/robots.db"
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        yield server.url


@pytest.fixture
def backend(store_url: str) -> Iterator[Backend]:
    opened = open_backend(store_url)
    yield opened
    opened.close()
