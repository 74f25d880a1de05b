"""A real Redis server for the tests: started on a free port of 127.0.0.1, in a temporary directory.

No mock stands in for Redis: leases, paces and expiries are Redis's own
behaviour, and the failure tests kill the server for real. ``redis-server``
must be installed (``.ci/run`` installs it); without it these tests fail,
they do not skip, so a missing install step cannot hide. No pytest here:
the fleet benchmark starts its Redis with this too.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import redis

START_TIMEOUT = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One ``redis-server``; ``stop`` kills it, ``start`` brings it back on the same port.

    ``arguments`` go to the server's command line (``--requirepass``, ``--maxmemory-policy``...).
    """

    def __init__(self, directory: Path, arguments: Sequence[str] = ()) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            raise RuntimeError(
                "redis-server is not installed: the store tests need a real Redis"
                " (apt-get install -y redis-server; .ci/run does it)"
            )
        self.executable = executable
        self.directory = directory
        self.port = free_port()
        self.arguments = list(arguments)
        self.password: str | None = None
        if "--requirepass" in self.arguments:
            self.password = self.arguments[self.arguments.index("--requirepass") + 1]
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.executable,
                "--port",
                str(self.port),
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
        client = redis.Redis(port=self.port, password=self.password, socket_connect_timeout=0.2)
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
