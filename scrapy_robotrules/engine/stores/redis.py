"""robots.txt records in Redis: one store for every process on every machine of a fleet.

SPEC 8: one robots.txt per origin, fetched once for the fleet.

Each origin has a hash of its record (expiring a week after it goes
stale), a lease key (``SET NX PX``: who fetches it now) and a pace key (the
next time the fleet may send it a request). Records, leases and paces
change in Lua scripts, which Redis runs one at a time, and paces are
counted on the Redis server's clock, so the machines' clocks need not
agree. Archived robots.txt bodies are plain keys by SHA-256, expiring
``KEEP_ARCHIVE`` seconds after they were last archived.

Every key of one origin carries the origin as its hash tag
(``robotrules:pace:{https://example.com}``): on a Redis Cluster they are
in one hash slot, so any script or multi-key operation on one origin runs
on one node, while the origins spread over the masters. The server is one
of three topologies, each redis-py's own client (:func:`topology`): a
server (``redis://``), a Redis Cluster (``redis+cluster://``, the seed
nodes) or the master a Sentinel group names (``redis+sentinel://``).
"""

from __future__ import annotations

import logging
import math
import ssl
import time
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.stores.interface import KEEP_ARCHIVE, KEEP_STALE, Record, StoreError
from scrapy_robotrules.engine.stores.naming import redact_url

try:
    import redis
    from redis.backoff import ExponentialBackoff, NoBackoff
    from redis.cluster import ClusterNode, RedisCluster
    from redis.connection import parse_url
    from redis.exceptions import (
        ClusterDownError,
        RedisClusterException,
        SlotNotCoveredError,
        TryAgainError,
    )
    from redis.retry import Retry
    from redis.sentinel import MasterNotFoundError, Sentinel
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "ROBOTRULES_STORE = 'redis://...' needs redis-py: pip install 'redis>=5'"
    ) from exc

__all__ = ["FAILOVER_RETRIES", "PREFIX", "RedisBackend", "Topology", "check_url", "topology"]

logger = logging.getLogger(__name__)

PREFIX = "robotrules:"

FAILOVER_RETRIES = 14
"""Tries after the first when a Cluster or Sentinel node stops answering, waiting 0.1 s, then
twice as long each time up to 1 s: about 11 s in all, for the replica to be promoted."""

_FAILOVER_BACKOFF = ExponentialBackoff(cap=1.0, base=0.05)

_FAILOVER_ERRORS = (
    redis.ConnectionError,  # the master gone; MasterNotFoundError while sentinels vote
    redis.TimeoutError,
    ClusterDownError,  # the cluster's slots not served while a replica takes over
    SlotNotCoveredError,
    TryAgainError,
)


class _Refused(Exception):
    """Carries an error no failover mends past redis-py's ``Retry``, which would wait for it."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _refusal(error: Exception) -> bool:
    """Whether ``error`` is one no failover mends, so not waited for.

    The servers refuse the password, or the client does not trust their
    certificate (``?ssl_ca_certs=`` names another CA, the host name is not
    the certificate's): redis-py's error is raised while handling the
    ``ssl`` module's, or names OpenSSL's ``CERTIFICATE_VERIFY_FAILED``.
    """
    if isinstance(error, redis.AuthenticationError):
        return True
    if isinstance(error.__cause__ or error.__context__, ssl.SSLCertVerificationError):
        return True
    return "CERTIFICATE_VERIFY_FAILED" in str(error)


_LEASE = """
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return 1
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""

_RESERVE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local interval = tonumber(ARGV[1])
local booked = tonumber(redis.call('GET', KEYS[1]) or '0')
local turn = math.max(now, booked)
local keep = math.ceil((turn + interval - now) * 1000) + 3600000
redis.call('SET', KEYS[1], string.format('%.6f', turn + interval), 'PX', keep)
return string.format('%.6f', turn - now)
"""

_SAVE = """
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
return 1
"""


class Topology(NamedTuple):
    """What a Redis store URL names: ``kind`` is ``server``, ``cluster`` or ``sentinel``.

    ``nodes`` are the cluster's seed nodes or the sentinels (empty for a
    server); ``options`` are redis-py's connection options, read by
    redis-py from the same URL with ``redis://`` (or ``rediss://``) and the
    first node: credentials, ``db``, TLS and query options alike.
    """

    kind: str
    nodes: tuple[tuple[str, int], ...]
    service: str
    options: dict[str, Any]


def topology(url: str) -> Topology:
    """How ``url`` is reached; ``ValueError`` (naming what is wrong, unmasked) if it cannot be.

    Nothing is contacted.
    """
    scheme, slashes, _ = url.partition("://")
    base, _, kind = scheme.lower().partition("+")
    if not kind:
        return Topology("server", (), "", {})
    if kind not in ("cluster", "sentinel") or base not in ("redis", "rediss") or not slashes:
        raise ValueError(f"unknown scheme {scheme!r}")
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    nodes = []
    for node in hosts.split(","):
        host, colon, port = node.rpartition(":")
        if not (colon and host and port.isdigit() and 0 < int(port) < 65536):
            raise ValueError(f"a node must be host:port, not {node!r}")
        nodes.append((unquote(host.strip("[]")), int(port)))
    path = [unquote(part) for part in parts.path.split("/") if part]
    service = ""
    if kind == "sentinel":
        if not path or len(path) > 2:
            raise ValueError("a Sentinel URL ends with /SERVICE or /SERVICE/db")
        service, path = path[0], path[1:]
        if path and not path[0].isdigit():
            raise ValueError(f"the db after /SERVICE/ must be a number, not {path[0]!r}")
    elif path and path != ["0"]:
        raise ValueError("a Redis Cluster has one database: no /db after its nodes")
    single = f"{base}://{userinfo + '@' if userinfo else ''}{hosts.split(',')[0]}/{''.join(path)}"
    options: dict[str, Any] = parse_url(  # type: ignore[no-untyped-call]
        f"{single}?{parts.query}" if parts.query else single
    )
    for key in ("host", "port", "connection_class"):
        options.pop(key, None)
    if base == "rediss":
        options["ssl"] = True
    if kind == "cluster":
        options.pop("db", None)
    return Topology(kind, tuple(nodes), service, options)


def check_url(url: str) -> None:
    """``ValueError`` (credentials masked) if redis-py refuses ``url``: nothing is contacted.

    redis-py's own reading of the URL (``ConnectionPool.from_url``, which
    :class:`RedisBackend` uses too; for a Cluster or Sentinel URL, of the
    same URL with its first node) is the judge: a bad port, database or
    query option (``?socket_timeout=abc``) is found before the crawl.
    """
    try:
        found = topology(url)
        if found.kind == "server":
            redis.ConnectionPool.from_url(url)
    except Exception as exc:  # whatever redis-py refuses the URL with
        raise ValueError(redact_url(url, f"{type(exc).__name__}: {exc}")) from None


class RedisBackend:
    """Records, leases and paces in the Redis store at ``url``; ``timeout`` bounds each call.

    A server's calls are not retried: one that does not answer within
    ``timeout`` is reported at once (:class:`StoreError`), so the crawl
    falls back to memory instead of stalling. A Cluster or Sentinel call
    that meets a node gone is tried again (redis-py's ``Retry``, up to
    :data:`FAILOVER_RETRIES` times) while the replica takes over, redis-py
    finding the new master; one WARNING says so once it answers. A call
    that still fails is reported, and calls are tried once each until one
    answers: a topology wholly down costs no more than a server down.
    """

    def __init__(self, url: str, *, timeout: float = 1.0, prefix: str = PREFIX) -> None:
        self.name = redact_url(url)
        """The URL without its credentials: what log lines and errors show."""
        self._url = url
        self.prefix = prefix
        self._timeout = timeout
        try:
            self.topology = topology(url)
            if self.topology.kind == "server":
                self._client: Any = redis.Redis.from_url(
                    url,
                    socket_timeout=timeout,
                    socket_connect_timeout=timeout,
                    retry=Retry(NoBackoff(), 0),
                )
            else:
                self._client = None  # a Cluster client asks its nodes at once: on first use
        except ValueError as exc:
            raise ValueError(f"{self.name}: {redact_url(url, str(exc))}") from None
        self._retries = 0 if self.topology.kind == "server" else FAILOVER_RETRIES
        self._retry = (
            Retry(_FAILOVER_BACKOFF, self._retries, _FAILOVER_ERRORS) if self._retries else None
        )
        self._trouble: tuple[float, str] | None = None
        """When the first failed try of a call now being retried failed, and why."""
        self._down = False
        """The last call failed after all its tries: the next one is tried once."""
        self._failures = 0
        """Failed tries of the call now being made."""
        self._sentinel: Sentinel | None = None
        self._master: tuple[str, int] | None = None
        """The Sentinel group's master this backend talked to last."""
        self._scripts: dict[str, Any] = {}

    @property
    def client(self) -> Any:
        """redis-py's client: a ``Redis`` (a server, a Sentinel master) or a ``RedisCluster``."""
        if self._client is None:
            found, timeout = self.topology, self._timeout
            sockets: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
            if found.kind == "cluster":
                self._client = RedisCluster(
                    startup_nodes=[
                        ClusterNode(host, port)  # type: ignore[no-untyped-call]
                        for host, port in found.nodes
                    ],
                    require_full_coverage=False,
                    # Its own tries do not wait between them: this backend's do (and say so).
                    retry=Retry(NoBackoff(), 0),
                    **sockets,
                    **found.options,
                )
            else:
                sentinel_options = {
                    key: value
                    for key, value in found.options.items()
                    if key.startswith(("socket_", "ssl"))
                }
                # Each sentinel asked once per try: a try's retries are this backend's.
                self._sentinel = Sentinel(  # type: ignore[no-untyped-call]
                    list(found.nodes),
                    sentinel_kwargs={
                        **sockets,
                        **sentinel_options,
                        "retry": Retry(NoBackoff(), 0),
                    },
                )
                self._client = self._sentinel.master_for(  # type: ignore[no-untyped-call]
                    found.service, retry=Retry(NoBackoff(), 0), **sockets, **found.options
                )
        return self._client

    def _script(self, source: str) -> Any:
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = self.client.register_script(source)
        return script

    def _key(self, kind: str, key: str) -> str:
        """``key``'s Redis key, its origin (``scheme://host[:port]``) the hash tag."""
        parts = urlsplit(key)
        origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else key
        return f"{self.prefix}{kind}:{{{origin}}}{key[len(origin) :]}"

    def _call(self, what: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        """``call(*args, **kwargs)`` on the client, through a failover if it meets one.

        A wrong password or an untrusted certificate is no failover: reported at once.
        """
        tries = 0

        def attempt() -> Any:
            nonlocal tries
            tries += 1
            try:
                return call(*args, **kwargs)
            except _FAILOVER_ERRORS as exc:
                refusal: Exception | None = exc if _refusal(exc) else None
                if refusal is None and tries == 1:
                    refusal = self._sentinels_refusal(exc)
                if refusal is not None:
                    raise _Refused(refusal) from exc
                raise

        try:
            if self._retry is None or self._down:
                result = attempt()
            else:
                self._failures = 0
                result = self._retry.call_with_retry(attempt, self._failed_try)
        except (redis.RedisError, RedisClusterException, _Refused) as exc:
            self._trouble = None
            self._down = self._retry is not None
            error = exc.error if isinstance(exc, _Refused) else exc
            # from None: the driver's own exception might show what was redacted here.
            raise StoreError(self.name, f"{what}: {self._problem(error)}") from None
        self._down = False
        master = self._master_address()
        moved = master != self._master and self._master is not None
        self._master = master
        if self._trouble is not None:
            since, problem = self._trouble
            self._trouble = None
            logger.warning(
                "robots.txt store %(store)s failed over (%(what)s: %(problem)s):"
                " it answers again after %(seconds).1f s",
                {
                    "store": self.name,
                    "what": what,
                    "problem": problem,
                    "seconds": time.monotonic() - since,
                },
            )
        elif moved and master is not None:
            # Reconnected to a new master at once, nothing failed: a failover all the same.
            logger.warning(
                "robots.txt store %(store)s failed over (%(what)s): its master is now %(master)s",
                {"store": self.name, "what": what, "master": f"{master[0]}:{master[1]}"},
            )
        return result

    def _master_address(self) -> tuple[str, int] | None:
        """The address of the master a Sentinel group named last; ``None`` for other topologies."""
        if self._sentinel is None:
            return None
        address: tuple[str, int] | None = getattr(
            self.client.connection_pool, "master_address", None
        )
        return address

    def _sentinels_refusal(self, error: Exception) -> Exception | None:
        """Why the sentinels refuse this backend, when none named the master; ``None`` if not.

        redis-py's ``MasterNotFoundError`` names what each sentinel failed
        with by its type only (``network:ConnectionError``): a wrong CA is
        in none of them. Each sentinel it names is asked once more
        (``PING``, on a call's first try only), and the first one's refusal
        (:func:`_refusal`) is what is reported. Sentinels that answered, as
        they do while they promote a replica, are not asked again.
        """
        if self._sentinel is None or not isinstance(error, MasterNotFoundError):
            return None
        for sentinel in self._sentinel.sentinels:
            if repr(sentinel) not in str(error):
                continue
            try:
                sentinel.ping()
            except redis.RedisError as reason:
                if _refusal(reason):
                    return redis.ConnectionError(f"{_sentinel_name(sentinel)}: {reason}")
        return None

    def _problem(self, error: Exception) -> str:
        """``error``'s message, credentials masked, each sentinel named by its address.

        redis-py's Sentinel names the sentinels that failed by their client's
        ``repr``, a screenful each: here ``sentinel host:port``.
        """
        text = str(error)
        if self._sentinel is not None:
            for sentinel in self._sentinel.sentinels:
                text = text.replace(repr(sentinel), _sentinel_name(sentinel))
        return redact_url(self._url, text)

    def _failed_try(self, error: Exception) -> None:
        """redis-py's ``Retry`` calls this on each failed try (the last too, then raises)."""
        self._failures += 1
        problem = self._problem(error)
        if self._failures <= self._retries:
            logger.debug(
                "robots.txt store %(store)s: %(problem)s; trying again",
                {"store": self.name, "problem": problem},
            )
        if self._trouble is None:
            self._trouble = (time.monotonic(), problem)

    def load(self, origin: str) -> Record | None:
        fields: dict[bytes, bytes] = self._call(
            "load", lambda: self.client.hgetall(self._key("robots", origin))
        )
        if not fields:
            return None
        try:
            status = fields.get(b"status", b"")
            url = fields.get(b"url", b"")
            return Record(
                origin,
                Outcome(fields[b"outcome"].decode()),
                fields.get(b"body"),
                int(status) if status else None,
                url.decode() if url else None,
                float(fields[b"fetched_at"]),
                float(fields[b"fresh_until"]),
            )
        except (KeyError, ValueError, UnicodeDecodeError):
            return None  # written by something else: as if absent, fetched again

    def save(self, record: Record) -> None:
        fields: dict[str, bytes | str] = {
            "outcome": record.outcome.value,
            "status": "" if record.status is None else str(record.status),
            "url": record.url or "",
            "fetched_at": repr(record.fetched_at),
            "fresh_until": repr(record.fresh_until),
        }
        if record.body is not None:
            fields["body"] = record.body
        expires = math.ceil((record.fresh_until + KEEP_STALE) * 1000)
        pairs = [item for field in fields.items() for item in field]
        keys = [self._key("robots", record.origin)]
        self._call("save", lambda: self._script(_SAVE)(keys=keys, args=[expires, *pairs]))

    def delete(self, origin: str) -> None:
        self._call("delete", lambda: self.client.delete(self._key("robots", origin)))

    def lease(self, origin: str, owner: str, seconds: float) -> bool:
        milliseconds = max(1, math.ceil(seconds * 1000))
        keys = [self._key("lease", origin)]
        taken = self._call(
            "lease", lambda: self._script(_LEASE)(keys=keys, args=[owner, milliseconds])
        )
        return bool(taken)

    def release(self, origin: str, owner: str) -> None:
        keys = [self._key("lease", origin)]
        self._call("release", lambda: self._script(_RELEASE)(keys=keys, args=[owner]))

    def reserve(self, origin: str, interval: float) -> float:
        if not (interval >= 0 and math.isfinite(interval)):
            raise ValueError(f"interval must be a finite number of seconds, not {interval!r}")
        keys = [self._key("pace", origin)]
        wait = self._call(
            "reserve", lambda: self._script(_RESERVE)(keys=keys, args=[repr(interval)])
        )
        return max(0.0, float(wait))

    def archive(self, sha256: str, body: bytes) -> None:
        key = f"{self.prefix}body:{sha256}"  # no origin: bodies spread over the masters
        self._call("archive", lambda: self.client.set(key, body, ex=math.ceil(KEEP_ARCHIVE)))

    def archived(self, sha256: str) -> bytes | None:
        key = f"{self.prefix}body:{sha256}"
        body: bytes | None = self._call("archived", lambda: self.client.get(key))
        return body

    def eviction(self) -> str | None:
        """The server's ``maxmemory-policy`` when it is not ``noeviction``.

        Any other policy lets Redis drop keys under memory pressure, pace
        keys included: fleet-wide turns are then forgotten. A server whose
        ``CONFIG`` command is disabled or renamed cannot say; that is
        reported as a possible eviction too.
        """
        answers = self._call("eviction", self._policies)
        if isinstance(answers, redis.ResponseError):  # CONFIG disabled, renamed or not permitted
            error = redact_url(self._url, str(answers))
            return f"maxmemory-policy cannot be read (CONFIG GET: {error}): it may evict keys"
        for answer in answers:
            policies = {_text(key): _text(value) for key, value in answer.items()}
            policy = policies.get("maxmemory-policy", "noeviction")
            if policy != "noeviction":
                return f"maxmemory-policy is {policy}: it evicts keys"
        return None

    def _policies(self) -> list[dict[Any, Any]] | redis.ResponseError:
        """Each master's ``CONFIG GET maxmemory-policy`` (a Cluster has several), or its refusal."""
        client = self.client
        try:
            if isinstance(client, RedisCluster):
                return [
                    client.config_get("maxmemory-policy", target_nodes=node)
                    for node in client.get_primaries()  # type: ignore[no-untyped-call]
                ]
            return [client.config_get("maxmemory-policy")]
        except redis.ResponseError as exc:
            if isinstance(exc, _FAILOVER_ERRORS):
                raise
            return exc

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._sentinel is not None:
            self._sentinel.close()


def _sentinel_name(sentinel: redis.Redis) -> str:
    """``sentinel host:port``: a sentinel's client as a log line names it."""
    address = sentinel.connection_pool.connection_kwargs
    return f"sentinel {address.get('host')}:{address.get('port')}"


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
