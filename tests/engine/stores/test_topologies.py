"""The Redis store on a Redis Cluster and on a Sentinel group: the same contract, and failovers.

Every backend and cached-store test of ``test_stores`` runs again here on
each topology (one started per module, emptied before each test); the
failover tests start their own, as they kill a master.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis

from scrapy_robotrules.engine.stores import StoreError, open_backend, redact_url, store_kind
from scrapy_robotrules.engine.stores import redis as redis_backend
from scrapy_robotrules.engine.stores.redis import RedisBackend, check_url, topology
from tests.engine.stores.test_stores import (  # noqa: F401  (run here on each topology)
    ORIGIN,
    TestBackends,
    TestCachedStore,
    record,
)
from tests.helpers.redisserver import ClusterServers, SentinelGroup, replicated


@pytest.fixture(scope="module")
def topologies() -> Iterator[dict[str, ClusterServers | SentinelGroup]]:
    with tempfile.TemporaryDirectory(prefix="robotrules-topologies-") as directory:
        cluster = ClusterServers(Path(directory) / "cluster")
        sentinel = SentinelGroup(Path(directory) / "sentinel")
        try:
            cluster.start()
            sentinel.start()
            yield {"cluster": cluster, "sentinel": sentinel}
        finally:
            cluster.stop()
            sentinel.stop()


def _flush(found: ClusterServers | SentinelGroup) -> None:
    masters = found.masters() if isinstance(found, ClusterServers) else [found.master]
    for master in masters:
        client = redis.Redis(port=master.port)
        client.flushall()
        client.close()


@pytest.fixture(params=["cluster", "sentinel"])
def store_url(
    request: pytest.FixtureRequest, topologies: dict[str, ClusterServers | SentinelGroup]
) -> str:
    """Overrides the conftest's: each test of the imported classes runs on both topologies."""
    found = topologies[request.param]
    _flush(found)
    return found.url


STORE_LOGGER = "scrapy_robotrules.engine.stores.redis"


def _failed_over(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "failed over" in r.getMessage()]


def _retried(caplog: pytest.LogCaptureFixture) -> int:
    return sum("trying again" in r.getMessage() for r in caplog.records)


def _await(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


class TestFailover:
    def test_a_cluster_master_killed_its_replica_answers(
        self, redis_cluster: ClusterServers, caplog: pytest.LogCaptureFixture
    ) -> None:
        backend = open_backend(redis_cluster.url)
        assert isinstance(backend, RedisBackend)
        saved = record()
        backend.save(saved)
        assert backend.lease(ORIGIN, "a", 60)
        assert backend.reserve(ORIGIN, 100.0) == 0
        master = redis_cluster.master_of(f"robotrules:robots:{{{ORIGIN}}}")
        # Every write on the replica before the kill: nothing lost, so nothing fetched again.
        assert replicated(master)
        replica = redis_cluster.kill(master)
        with caplog.at_level(logging.DEBUG, logger=STORE_LOGGER), ThreadPoolExecutor(1) as pool:
            loading = pool.submit(backend.load, ORIGIN)
            _await(lambda: _retried(caplog) > 0)  # the call met the dead master, and waits
            redis_cluster.promote(replica, master)
            assert loading.result() == saved
            assert not backend.lease(ORIGIN, "b", 60)  # still a's
            assert backend.reserve(ORIGIN, 100.0) > 50  # the pace kept, not started again
        [warning] = _failed_over(caplog)
        assert warning.levelno == logging.WARNING
        assert warning.exc_info is None
        assert "load" in warning.getMessage()
        backend.close()

    def test_a_sentinel_master_killed_the_sentinels_promote_its_replica(
        self, redis_sentinel: SentinelGroup, caplog: pytest.LogCaptureFixture
    ) -> None:
        backend = open_backend(redis_sentinel.url)
        saved = record()
        backend.save(saved)
        assert backend.lease(ORIGIN, "a", 60)
        assert backend.reserve(ORIGIN, 100.0) == 0
        assert replicated(redis_sentinel.master)
        with caplog.at_level(logging.DEBUG, logger=STORE_LOGGER):
            # Killed: the sentinels see it down, agree, and promote the replica,
            # while this call waits (its first try cannot reach a master).
            redis_sentinel.master.stop()
            assert backend.load(ORIGIN) == saved
            assert _retried(caplog) > 0
            assert not backend.lease(ORIGIN, "b", 60)
            assert backend.reserve(ORIGIN, 100.0) > 50
        [warning] = _failed_over(caplog)
        assert warning.levelno == logging.WARNING
        assert warning.exc_info is None
        backend.close()

    def test_a_topology_wholly_down_waits_once_then_tries_once(
        self,
        redis_sentinel: SentinelGroup,
        caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setattr(redis_backend, "FAILOVER_RETRIES", 3)
        backend = open_backend(redis_sentinel.url)
        backend.save(record())
        redis_sentinel.stop()
        with caplog.at_level(logging.DEBUG, logger=STORE_LOGGER):
            with pytest.raises(StoreError):
                backend.load(ORIGIN)
            assert _retried(caplog) == 3
            with pytest.raises(StoreError):
                backend.load(ORIGIN)
            assert _retried(caplog) == 3  # down: tried once, not waited for again
        assert not _failed_over(caplog)


class TestUrls:
    @pytest.mark.parametrize(
        "url",
        [
            "redis+cluster://a:7000",
            "redis+cluster://a:7000,b:7001",
            "rediss+cluster://bob:s3cret@a:7000,b:7001",
            "redis+sentinel://a:26379/robots",
            "redis+sentinel://a:26379,b:26379,c:26379/robots/2",
            "rediss+sentinel://:s3cret@a:26379/robots?socket_keepalive=true",
        ],
    )
    def test_forms(self, url: str) -> None:
        assert store_kind(url) == "redis"
        check_url(url)
        assert "s3cret" not in open_backend(url).name  # opening contacts nothing

    def test_nodes_service_db_credentials_and_tls(self) -> None:
        found = topology("rediss+sentinel://bob:s3%40cret@a:26379,[::1]:26380/robots/2")
        assert found.kind == "sentinel"
        assert found.nodes == (("a", 26379), ("::1", 26380))
        assert found.service == "robots"
        assert found.options == {"username": "bob", "password": "s3@cret", "db": 2, "ssl": True}
        cluster = topology("redis+cluster://a:7000,b:7001?socket_keepalive=true")
        assert cluster.nodes == (("a", 7000), ("b", 7001))
        assert cluster.options == {"socket_keepalive": True}

    @pytest.mark.parametrize(
        ("url", "problem"),
        [
            ("redis+cluster://:s3cret@a", "host:port"),
            ("redis+cluster://:s3cret@a:7000,b", "host:port"),
            ("redis+cluster://:s3cret@a:99999", "host:port"),
            ("redis+cluster://:s3cret@a:7000/3", "one database"),
            ("redis+sentinel://:s3cret@a:26379", "SERVICE"),
            ("redis+sentinel://:s3cret@a:26379/robots/x/y", "SERVICE"),
            ("redis+sentinel://:s3cret@a:26379/robots?socket_timeout=abc", "socket_timeout"),
            ("redis+sentinel://:s3cret@a:26379/robots/x", "db"),
        ],
    )
    def test_refused_before_the_crawl_without_the_password(self, url: str, problem: str) -> None:
        with pytest.raises(ValueError, match=problem) as refused:
            check_url(url)
        assert "s3cret" not in str(refused.value)

    def test_credentials_are_masked(self) -> None:
        url = "redis+sentinel://bob:s3cret@a:26379,b:26379/robots/0"
        assert redact_url(url) == "redis+sentinel://***@a:26379,b:26379/robots/0"
        assert redact_url(url, f"{url}: AUTH s3cret") == f"{redact_url(url)}: AUTH ***"

    def test_every_key_of_an_origin_in_one_slot(
        self, topologies: dict[str, ClusterServers | SentinelGroup]
    ) -> None:
        """Hash tags: one origin's keys share a slot; many origins spread over every master."""
        cluster = topologies["cluster"]
        assert isinstance(cluster, ClusterServers)
        _flush(cluster)
        backend = open_backend(cluster.url)
        origins = [f"https://site{n}.example:8443" for n in range(40)]
        for origin in origins:
            backend.save(record()._replace(origin=origin))
            backend.save(record()._replace(origin=f"{origin}/.well-known/tdmrep.json"))
            backend.lease(origin, "a", 60)
            backend.reserve(origin, 1.0)
        slots: dict[str, set[int]] = {origin: set() for origin in origins}
        masters: set[int] = set()
        for master in cluster.masters():
            client = redis.Redis(port=master.port)
            for key in client.scan_iter():
                origin = key.decode().partition("{")[2].partition("}")[0]
                slots[origin].add(cluster.slot_of(key.decode()))
                masters.add(master.port)
            client.close()
        assert all(len(found) == 1 for found in slots.values())  # 4 keys each, one slot
        assert sum(len(found) for found in slots.values()) == len(origins)
        assert len(masters) == 3
        backend.close()


def test_a_cluster_says_when_any_of_its_masters_evicts(
    topologies: dict[str, ClusterServers | SentinelGroup],
) -> None:
    """Each master has its own ``maxmemory-policy``: one that evicts is reported."""
    cluster = topologies["cluster"]
    assert isinstance(cluster, ClusterServers)
    backend = open_backend(cluster.url)
    assert backend.eviction() is None
    master = cluster.masters()[-1]
    client = redis.Redis(port=master.port)
    client.config_set("maxmemory-policy", "allkeys-lru")
    try:
        assert backend.eviction() == "maxmemory-policy is allkeys-lru: it evicts keys"
    finally:
        client.config_set("maxmemory-policy", "noeviction")
        client.close()
        backend.close()


def test_a_password_reaches_the_servers_and_no_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A Sentinel group whose servers need a password, its sentinels none; a failover."""
    secret = "s3cret-pass"
    group = SentinelGroup(tmp_path, password=secret)
    try:
        group.start()
        backend = open_backend(group.url)
        assert secret in group.url
        assert secret not in backend.name
        saved = record()
        backend.save(saved)
        assert replicated(group.master)
        with caplog.at_level(logging.DEBUG, logger=STORE_LOGGER):
            group.master.stop()
            assert backend.load(ORIGIN) == saved  # the new master, with the password too
        assert len(_failed_over(caplog)) == 1
        assert not any(secret in r.getMessage() for r in caplog.records)
        backend.close()
    finally:
        group.stop()
