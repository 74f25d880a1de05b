"""Real Redis for the tests: a server, a Cluster or a Sentinel group, on free ports of 127.0.0.1.

No mock stands in for Redis: leases, paces and expiries are Redis's own
behaviour, and the failure tests kill the server for real. ``redis-server``
must be installed (``.ci/run`` installs it); without it these tests fail,
they do not skip, so a missing install step cannot hide. No pytest here:
the fleet benchmark starts its Redis with this too.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import quote

import redis

from tests.helpers.tls import Certificates

START_TIMEOUT = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


CLUSTER_BUS_OFFSET = 10_000
"""A cluster node also listens on its port plus this, for the other nodes."""


EPHEMERAL_PORTS = 32_768
"""Where the system's ephemeral ports begin (Linux's default; higher elsewhere)."""


def free_cluster_port() -> int:
    """A free port whose cluster bus port is free too, both below the ephemeral ports.

    A port the system may give any outgoing connection as its own (the
    tests' clients make many) could be taken between this probe and the
    server's start: the server would then not start.
    """
    while True:
        port = random.randrange(10_000, EPHEMERAL_PORTS - CLUSTER_BUS_OFFSET)
        with socket.socket() as probe, socket.socket() as bus:
            try:
                probe.bind(("127.0.0.1", port))
                bus.bind(("127.0.0.1", port + CLUSTER_BUS_OFFSET))
            except OSError:
                continue
        return port


def _tls_arguments(port: int, tls: Certificates | None) -> list[str]:
    """A server's ports: ``port`` in plain text, or TLS only (``--port 0``) with ``tls``.

    With TLS its replication links and cluster bus speak TLS too.
    """
    if tls is None:
        return ["--port", str(port)]
    return [
        "--port",
        "0",
        "--tls-port",
        str(port),
        *tls.server_arguments(),
        "--tls-replication",
        "yes",
        "--tls-cluster",
        "yes",
    ]


def _query(tls: Certificates | None) -> str:
    return "" if tls is None else f"?{tls.query}"


class RedisServer:
    """One ``redis-server``; ``stop`` kills it, ``start`` brings it back on the same port.

    ``arguments`` go to the server's command line (``--requirepass``, ``--maxmemory-policy``...);
    with ``tls`` it serves TLS only, with those certificates.
    """

    def __init__(
        self,
        directory: Path,
        arguments: Sequence[str] = (),
        port: int | None = None,
        tls: Certificates | None = None,
    ) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            raise RuntimeError(
                "redis-server is not installed: the store tests need a real Redis"
                " (apt-get install -y redis-server; .ci/run does it)"
            )
        self.executable = executable
        self.directory = directory
        self.port = free_port() if port is None else port
        self.arguments = list(arguments)
        self.password: str | None = None
        if "--requirepass" in self.arguments:
            self.password = self.arguments[self.arguments.index("--requirepass") + 1]
        self.tls = tls
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        scheme = "redis" if self.tls is None else "rediss"
        return f"{scheme}://127.0.0.1:{self.port}/0{_query(self.tls)}"

    @property
    def options(self) -> dict[str, Any]:
        """redis-py's options for the tests' own clients of this server: password, TLS."""
        return {"password": self.password, **_client_tls(self.tls)}

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.executable,
                *_tls_arguments(self.port, self.tls),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
                *self.arguments,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2, **self.options)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.02)
        client.close()

    def stop(self) -> None:
        """Kill the server at once, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


def _wait(what: str, ready: Callable[[], bool], timeout: float = START_TIMEOUT) -> None:
    """Poll ``ready()`` (errors count as not ready) until it is true; ``RuntimeError`` if never."""
    deadline = time.monotonic() + timeout
    while True:
        with suppress(redis.RedisError):
            if ready():
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not ready after {timeout:.0f} s")
        time.sleep(0.02)


def _client_tls(tls: Certificates | None) -> dict[str, Any]:
    return {} if tls is None else tls.client_options()


def _command(port: int, *command: str, **options: Any) -> Any:
    """The answer of the server on ``port`` to ``command``, decoded; ``options`` are redis-py's."""
    client = redis.Redis(port=port, socket_timeout=1.0, decode_responses=True, **options)
    try:
        return client.execute_command(*command)  # type: ignore[no-untyped-call]
    finally:
        client.close()


def _pairs(answer: dict[str, Any] | list[str]) -> dict[str, str]:
    """A sentinel's answer (``[name, value...]``, or redis-py's dict of it), as text."""
    if isinstance(answer, dict):
        return {name: str(value) for name, value in answer.items()}
    return dict(zip(answer[::2], answer[1::2], strict=True))


def replicated(server: RedisServer) -> bool:
    """Whether ``server``'s replica has every write so far (``WAIT 1``): none lost if it dies."""
    return bool(_command(server.port, "WAIT", "1", "5000", **server.options) == 1)


def _slot_owners(server: RedisServer) -> dict[tuple[int, int], int]:
    """Each slot range's master port, as ``server`` sees it (``CLUSTER SLOTS``)."""
    ranges = _command(server.port, "CLUSTER", "SLOTS", **server.options)
    return {(int(r[0]), int(r[1])): int(r[2][1]) for r in ranges}


def _cluster_ok(server: RedisServer) -> bool:
    return "cluster_state:ok" in _command(server.port, "CLUSTER", "INFO", **server.options)


def _info(server: RedisServer, section: str) -> dict[str, Any]:
    client = redis.Redis(
        port=server.port, socket_timeout=1.0, socket_connect_timeout=0.2, **server.options
    )
    try:
        return dict(client.info(section))
    finally:
        client.close()


class ClusterServers:
    """A Redis Cluster of three masters and three replicas, ``redis-cli --cluster create``'s own.

    ``fail_over(master)`` kills a master, as a crash would, and promotes its
    replica (``CLUSTER FAILOVER TAKEOVER``, so that the moment is the test's:
    ``kill`` and ``promote`` are the two halves), returning once every live
    node agrees on the new layout. With ``password`` every node asks for it
    (``requirepass``) and its replica gives it (``masterauth``); with ``tls``
    every node serves TLS only, its cluster bus and replication links too.
    """

    NODES = 6

    def __init__(
        self,
        directory: Path,
        node_timeout: int = 1000,
        password: str | None = None,
        tls: Certificates | None = None,
    ) -> None:
        self.password = password
        self.tls = tls
        auth = [] if password is None else ["--requirepass", password, "--masterauth", password]
        self.servers = []
        for n in range(self.NODES):
            node = directory / f"node{n}"
            node.mkdir(parents=True)
            self.servers.append(
                RedisServer(
                    node,
                    [
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        str(node / "nodes.conf"),
                        "--cluster-node-timeout",
                        str(node_timeout),
                        *auth,
                    ],
                    port=free_cluster_port(),
                    tls=tls,
                )
            )

    @property
    def url(self) -> str:
        """Two seed nodes: the client discovers the others."""
        scheme = "redis+cluster" if self.tls is None else "rediss+cluster"
        auth = "" if self.password is None else f":{quote(self.password, safe='')}@"
        seeds = ",".join(f"127.0.0.1:{s.port}" for s in self.servers[:2])
        return f"{scheme}://{auth}{seeds}{_query(self.tls)}"

    @property
    def live(self) -> list[RedisServer]:
        return [s for s in self.servers if s.process is not None]

    def start(self) -> None:
        for server in self.servers:
            server.start()
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is not installed (it comes with redis-server)")
        tls = [] if self.tls is None else ["--tls", "--cacert", str(self.tls.ca)]
        # The password in the environment, not on a command line any process can read.
        auth = {} if self.password is None else {"REDISCLI_AUTH": self.password}
        subprocess.run(
            [
                cli,
                *tls,
                "--cluster",
                "create",
                *(f"127.0.0.1:{s.port}" for s in self.servers),
                "--cluster-replicas",
                "1",
                "--cluster-yes",
            ],
            env={**os.environ, **auth},
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._wait_settled()

    def _wait_settled(self) -> None:
        """Every live node says ``cluster_state:ok`` and knows the same masters; replicas synced."""
        live = self.live

        def settled() -> bool:
            masters = [s for s in live if _info(s, "replication")["role"] == "master"]
            replicas = [s for s in live if s not in masters]
            if len(masters) != 3:
                return False
            if any(_info(s, "replication").get("master_link_status") != "up" for s in replicas):
                return False
            return all(
                _cluster_ok(s) and set(_slot_owners(s).values()) == {m.port for m in masters}
                for s in live
            )

        _wait("the Redis Cluster", settled, timeout=30.0)

    def masters(self) -> list[RedisServer]:
        return [s for s in self.live if _info(s, "replication")["role"] == "master"]

    def slot_of(self, key: str) -> int:
        node = self.live[0]
        return int(_command(node.port, "CLUSTER", "KEYSLOT", key, **node.options))

    def master_of(self, key: str) -> RedisServer:
        """The live master holding ``key``'s hash slot."""
        slot = self.slot_of(key)
        for (first, last), owner in _slot_owners(self.live[0]).items():
            if first <= slot <= last:
                return next(s for s in self.servers if s.port == owner)
        raise RuntimeError(f"no master holds {key!r}")

    def replica_of(self, master: RedisServer) -> RedisServer:
        for server in self.live:
            info = _info(server, "replication")
            if info["role"] == "slave" and int(info["master_port"]) == master.port:
                return server
        raise RuntimeError(f"master {master.port} has no replica")

    def fail_over(self, master: RedisServer) -> RedisServer:
        """Kill ``master`` and promote its replica; the replica, once the cluster settled."""
        replica = self.kill(master)
        self.promote(replica, master)
        return replica

    def kill(self, master: RedisServer) -> RedisServer:
        """Kill ``master``, as a crash would; its replica, not yet promoted."""
        replica = self.replica_of(master)
        master.stop()
        self.servers.remove(master)
        self.servers.append(master)  # the live nodes first
        return replica

    def promote(self, replica: RedisServer, master: RedisServer) -> None:
        """``CLUSTER FAILOVER TAKEOVER`` on ``replica``; back once every live node agrees."""
        _command(replica.port, "CLUSTER", "FAILOVER", "TAKEOVER", **replica.options)
        live = self.live

        def promoted() -> bool:
            if _info(replica, "replication")["role"] != "master":
                return False
            for server in live:
                owners = set(_slot_owners(server).values())
                if not _cluster_ok(server) or master.port in owners:
                    return False
                if replica.port not in owners:
                    return False
            return True

        _wait(f"the replica {replica.port} of master {master.port}", promoted, timeout=30.0)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


class SentinelGroup:
    """A master, its replica and three sentinels watching them as ``SERVICE``.

    ``fail_over()`` kills the master and returns once the sentinels promoted the replica.
    """

    SERVICE = "robots"

    def __init__(
        self, directory: Path, password: str | None = None, tls: Certificates | None = None
    ) -> None:
        self.directory = directory
        self.password = password
        """The master's and the replica's (``requirepass``, ``masterauth``); not the sentinels'."""
        self.tls = tls
        """Certificates of every server and sentinel, which then serve TLS only."""
        (directory / "master").mkdir(parents=True)
        (directory / "replica").mkdir(parents=True)
        auth = [] if password is None else ["--requirepass", password, "--masterauth", password]
        self.master = RedisServer(directory / "master", auth, tls=tls)
        self.replica = RedisServer(
            directory / "replica",
            ["--replicaof", "127.0.0.1", str(self.master.port), *auth],
            tls=tls,
        )
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.sentinels: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        auth = "" if self.password is None else f":{quote(self.password, safe='')}@"
        scheme = "redis+sentinel" if self.tls is None else "rediss+sentinel"
        return f"{scheme}://{auth}{hosts}/{self.SERVICE}/0{_query(self.tls)}"

    def _ask(self, port: int, command: str) -> Any:
        """The sentinel on ``port``'s answer to ``SENTINEL command SERVICE``."""
        return _command(port, "SENTINEL", command, self.SERVICE, **_client_tls(self.tls))

    def _sentinel_config(self, port: int, directory: Path) -> str:
        if self.tls is None:
            ports = f"port {port}\n"
        else:
            tls = self.tls
            ports = (
                f"port 0\ntls-port {port}\ntls-cert-file {tls.cert}\ntls-key-file {tls.key}\n"
                f"tls-ca-cert-file {tls.ca}\ntls-auth-clients no\ntls-replication yes\n"
            )
        return (
            f"{ports}bind 127.0.0.1\nprotected-mode no\ndir {directory}\n"
            f"sentinel monitor {self.SERVICE} 127.0.0.1 {self.master.port} 2\n"
            f"sentinel down-after-milliseconds {self.SERVICE} 1000\n"
            f"sentinel failover-timeout {self.SERVICE} 10000\n"
            + (f"sentinel auth-pass {self.SERVICE} {self.password}\n" if self.password else "")
        )

    def start(self) -> None:
        self.master.start()
        self.replica.start()
        _wait(
            "the replica",
            lambda: _info(self.replica, "replication").get("master_link_status") == "up",
        )
        for port in self.sentinel_ports:
            directory = self.directory / f"sentinel{port}"
            directory.mkdir()
            config = directory / "sentinel.conf"
            config.write_text(self._sentinel_config(port, directory))
            self.sentinels.append(
                subprocess.Popen(
                    [self.master.executable, str(config), "--sentinel"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        self._wait_watching(self.master)

    def _wait_watching(self, master: RedisServer) -> None:
        """Every sentinel names ``master``, knows the other two and a replica in sync."""

        def watching() -> bool:
            for port in self.sentinel_ports:
                address = self._ask(port, "GET-MASTER-ADDR-BY-NAME")
                if address is None or int(address[1]) != master.port:
                    return False
                state = _pairs(self._ask(port, "MASTER"))
                if state["num-other-sentinels"] != "2" or state["flags"] != "master":
                    return False
                replicas = map(_pairs, self._ask(port, "REPLICAS"))
                if not any(
                    r["flags"] == "slave" and r["master-link-status"] == "ok" for r in replicas
                ):
                    return False
            return True

        _wait("the sentinels", watching, timeout=60.0)

    def fail_over(self) -> RedisServer:
        """Kill the master, as a crash would; the replica, once every sentinel names it master.

        Not ``SENTINEL FAILOVER``: that leaves the old master taking writes
        until a sentinel turns it into a replica, seconds later, and what it
        took then is lost.
        """
        old, new = self.master, self.replica
        old.stop()
        self.master, self.replica = new, old

        def promoted() -> bool:
            if _info(new, "replication")["role"] != "master":
                return False
            for port in self.sentinel_ports:
                address = self._ask(port, "GET-MASTER-ADDR-BY-NAME")
                if address is None or int(address[1]) != new.port:
                    return False
            return True

        _wait("the sentinels' failover", promoted, timeout=60.0)
        return new

    def stop(self) -> None:
        for process in self.sentinels:
            if process.poll() is None:
                process.kill()
                process.wait()
        self.sentinels = []
        self.replica.stop()
        self.master.stop()
