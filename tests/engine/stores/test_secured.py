"""The Redis store over TLS on every topology, and on a Redis Cluster that asks for a password.

The servers serve TLS only, with a certificate of a CA made for this
module; the store's URL names that CA (``?ssl_ca_certs=``), so the client
checks every server, and with ``rediss+sentinel://`` every sentinel too.
Every backend test of ``test_stores`` runs again here on each of them (one
started per module, emptied before each test).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from scrapy_robotrules.engine.stores import CachedStore, StoreError, open_backend
from tests.engine.stores.test_stores import (  # noqa: F401  (run here on each topology)
    ORIGIN,
    TestBackends,
    record,
)
from tests.helpers.redisserver import ClusterServers, RedisServer, SentinelGroup
from tests.helpers.tls import Certificates, make_certificates

SECRET = "cl0ster-s3cret"
WRONG = "wr0ng-s3cret"

Topology = RedisServer | ClusterServers | SentinelGroup


class Secured:
    """The module's topologies, and a CA that signed none of their certificates."""

    def __init__(self, directory: Path) -> None:
        self.tls = make_certificates(directory / "tls")
        self.other: Certificates = make_certificates(directory / "other", "another")
        (directory / "server").mkdir()
        self.topologies: dict[str, Topology] = {
            "tls-server": RedisServer(directory / "server", tls=self.tls),
            "tls-cluster": ClusterServers(directory / "tls-cluster", tls=self.tls),
            "tls-sentinel": SentinelGroup(
                directory / "tls-sentinel", password=SECRET, tls=self.tls
            ),
            "password-cluster": ClusterServers(directory / "password-cluster", password=SECRET),
        }

    def untrusting(self, name: str) -> str:
        """``name``'s URL, with a password, trusting the other CA only."""
        url = self.topologies[name].url.replace(str(self.tls.ca), str(self.other.ca))
        if SECRET not in url:
            url = url.replace("://", f"://:{SECRET}@", 1)
        return url


@pytest.fixture(scope="module")
def secured() -> Iterator[Secured]:
    with tempfile.TemporaryDirectory(prefix="robotrules-secured-") as directory:
        found = Secured(Path(directory))
        try:
            # Started side by side: each mostly waits for its servers to agree.
            with ThreadPoolExecutor(len(found.topologies)) as pool:
                for started in [pool.submit(t.start) for t in found.topologies.values()]:
                    started.result()
            yield found
        finally:
            for topology in found.topologies.values():
                topology.stop()


def _masters(topology: Topology) -> list[RedisServer]:
    if isinstance(topology, ClusterServers):
        return topology.masters()
    return [topology.master if isinstance(topology, SentinelGroup) else topology]


def _flush(topology: Topology) -> None:
    for master in _masters(topology):
        client = redis.Redis(port=master.port, **master.options)
        client.flushall()
        client.close()


@pytest.fixture(params=["tls-server", "tls-cluster", "tls-sentinel", "password-cluster"])
def store_url(request: pytest.FixtureRequest, secured: Secured) -> str:
    """Overrides the conftest's: each test of ``TestBackends`` runs on each topology."""
    topology = secured.topologies[request.param]
    _flush(topology)
    return topology.url


def test_tls_urls_name_the_ca_and_the_servers_serve_tls_only(secured: Secured) -> None:
    """No plain-text port to fall back on: what the store reads came over TLS.

    The sentinels too: a ``rediss+sentinel://`` store speaks TLS to them.
    """
    for name in ("tls-server", "tls-cluster", "tls-sentinel"):
        topology = secured.topologies[name]
        assert topology.url.startswith("rediss")
        assert f"ssl_ca_certs={secured.tls.ca}" in topology.url
        ports = [master.port for master in _masters(topology)]
        if isinstance(topology, SentinelGroup):
            ports += topology.sentinel_ports
        for port in ports:
            plain = redis.Redis(port=port, socket_timeout=5.0, retry=Retry(NoBackoff(), 0))
            with pytest.raises(redis.ConnectionError):
                plain.ping()
            plain.close()


def _retried(caplog: pytest.LogCaptureFixture) -> int:
    return sum("trying again" in r.getMessage() for r in caplog.records)


def _refused(url: str, caplog: pytest.LogCaptureFixture, why: str) -> str:
    """The StoreError of a first call on ``url``'s store: at once, no traceback, no retries.

    It says ``why``; so does the one WARNING of a cached store on ``url``, with no traceback.
    """
    backend = open_backend(url)
    caplog.clear()
    with caplog.at_level(logging.DEBUG), pytest.raises(StoreError) as raised:
        backend.load(ORIGIN)
    backend.close()
    assert raised.value.__cause__ is None
    assert _retried(caplog) == 0  # no failover to wait for
    message = str(raised.value)
    assert message.startswith(f"{backend.name}: load: ")
    assert why in message
    store = CachedStore(open_backend(url))
    with caplog.at_level(logging.DEBUG):
        assert store.get(ORIGIN) is None
    store.close()
    [warning] = [r for r in caplog.records if " failed (" in r.getMessage()]
    assert warning.levelno == logging.WARNING
    assert warning.exc_info is None
    # A cluster names the seed it tried last, either of them: the same problem otherwise.
    assert f"{backend.name} failed (load: " in warning.getMessage()
    assert why in warning.getMessage()
    for secret in (SECRET, WRONG):
        assert secret not in message
        assert not any(secret in r.getMessage() for r in caplog.records)
    return message


@pytest.mark.parametrize("name", ["tls-server", "tls-cluster", "tls-sentinel"])
def test_a_certificate_of_another_ca_is_refused_at_once_without_the_password(
    secured: Secured, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    message = _refused(secured.untrusting(name), caplog, "certificate verify failed")
    assert "<redis." not in message  # each sentinel named by its address, not a client's repr


@pytest.mark.parametrize("name", ["password-cluster", "tls-sentinel"])
def test_a_wrong_password_is_refused_at_once(
    secured: Secured, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = secured.topologies[name].url.replace(SECRET, WRONG)
    assert WRONG in url
    message = _refused(url, caplog, "invalid username-password pair")
    assert "***" in message


def test_a_cluster_password_reaches_every_node_and_no_log_line(
    secured: Secured, caplog: pytest.LogCaptureFixture
) -> None:
    cluster = secured.topologies["password-cluster"]
    assert isinstance(cluster, ClusterServers)
    _flush(cluster)
    assert cluster.url.startswith(f"redis+cluster://:{SECRET}@")
    with caplog.at_level(logging.DEBUG):
        backend = open_backend(cluster.url)
        assert SECRET not in backend.name
        origins = [f"https://site{n}.example" for n in range(40)]
        for origin in origins:
            backend.save(record()._replace(origin=origin))
        assert all(backend.load(origin) is not None for origin in origins)
        assert backend.eviction() is None  # CONFIG GET on each master, authenticated
        backend.close()
    written = [_keys(master) for master in cluster.masters()]
    assert sum(written) == len(origins)
    assert all(written)  # every master took some: each authenticated
    assert not any(SECRET in r.getMessage() for r in caplog.records)


def _keys(master: RedisServer) -> int:
    client = redis.Redis(port=master.port, **master.options)
    try:
        return int(client.dbsize())
    finally:
        client.close()
