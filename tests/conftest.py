"""Shared pytest wiring: the mock, Redis and store fixtures, and the crawl marker."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol, TypeVar

import pytest
import scrapy

from scrapy_robotrules.engine.stores import Backend, open_backend
from tests.helpers.crawling import (  # noqa: F401  (the ``mockserver`` fixture)
    SCRAPY_VERSION,
    mockserver_fixture,
)
from tests.helpers.redisserver import ClusterServers, RedisServer, SentinelGroup


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Without pytest-twisted (``-p no:twisted``), accept its ``--reactor`` and ignore it.

    ``-p no:twisted`` is the switch to Scrapy's third mode, without a reactor
    (see :mod:`tests.helpers.crawling`); the ``--reactor`` of the project's
    ``addopts`` then chooses nothing.
    """
    if not pluginmanager.has_plugin("twisted"):
        parser.addoption("--reactor", default="none", help="ignored: -p no:twisted runs no reactor")


def pytest_configure(config: pytest.Config) -> None:
    """Without a reactor, forbid importing one, as ``scrapy crawl`` does in that mode."""
    if not config.pluginmanager.has_plugin("twisted"):
        if SCRAPY_VERSION < (2, 19):
            raise pytest.UsageError(
                f"-p no:twisted: Scrapy {scrapy.__version__} cannot download without a Twisted"
                " reactor (TWISTED_REACTOR_ENABLED = False downloads with aiohttp from 2.19 on)"
            )
        from scrapy.utils.reactorless import install_reactor_import_hook

        install_reactor_import_hook()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that runs a real crawl, so CI can rerun them under the other reactor."""
    for item in items:
        module = getattr(item, "module", None)
        if "mockserver" in getattr(item, "fixturenames", ()) or getattr(
            module, "CRAWL_TESTS", False
        ):
            item.add_marker(pytest.mark.crawl)


class _Topology(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...


TopologyT = TypeVar("TopologyT", bound=_Topology)


def _running(make: Callable[[Path], TopologyT], prefix: str) -> Iterator[TopologyT]:
    """``make(directory)`` started in a temporary directory for one test, killed afterwards."""
    with tempfile.TemporaryDirectory(prefix=prefix) as directory:
        topology = make(Path(directory))
        try:
            topology.start()
            yield topology
        finally:
            topology.stop()


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A real Redis server per test, in a temporary directory, killed afterwards."""
    yield from _running(RedisServer, "robotrules-redis-")


@pytest.fixture
def redis_cluster() -> Iterator[ClusterServers]:
    """A real Redis Cluster (three masters, three replicas) per test, killed afterwards."""
    yield from _running(ClusterServers, "robotrules-cluster-")


@pytest.fixture
def redis_sentinel() -> Iterator[SentinelGroup]:
    """A real Sentinel group (a master, a replica, three sentinels) per test, killed afterwards."""
    yield from _running(SentinelGroup, "robotrules-sentinel-")


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
