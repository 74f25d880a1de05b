"""robots.txt records in Redis: one store for every process on every machine of a fleet.

SPEC 8: one robots.txt per origin, fetched once for the fleet.

Each origin has a hash of its record (expiring a week after it goes
stale), a lease key (``SET NX PX``: who fetches it now) and a pace key (the
next time the fleet may send it a request). Leases and paces change in Lua
scripts, which Redis runs one at a time, and paces are counted on the Redis
server's clock, so the machines' clocks need not agree. Archived
robots.txt bodies are plain keys by SHA-256, expiring ``KEEP_ARCHIVE``
seconds after they were last archived.
"""

from __future__ import annotations

import math
from typing import Any

from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.stores.interface import KEEP_ARCHIVE, KEEP_STALE, Record, StoreError
from scrapy_robotrules.engine.stores.naming import redact_url

try:
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "ROBOTRULES_STORE = 'redis://...' needs redis-py: pip install 'scrapy-robotrules[redis]'"
    ) from exc

__all__ = ["PREFIX", "RedisBackend", "check_url"]

PREFIX = "robotrules:"

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


def check_url(url: str) -> None:
    """``ValueError`` (credentials masked) if redis-py refuses ``url``: nothing is contacted.

    redis-py's own reading of the URL (``ConnectionPool.from_url``, which
    :class:`RedisBackend` uses too) is the judge: a bad port, database or
    query option (``?socket_timeout=abc``) is found before the crawl.
    """
    try:
        redis.ConnectionPool.from_url(url)
    except Exception as exc:  # whatever redis-py refuses the URL with
        raise ValueError(redact_url(url, f"{type(exc).__name__}: {exc}")) from None


class RedisBackend:
    """Records, leases and paces in the Redis server at ``url``; ``timeout`` bounds each call.

    Calls are synchronous and not retried: a server that does not answer
    within ``timeout`` is reported at once (:class:`StoreError`), so the
    crawl falls back to memory instead of stalling.
    """

    def __init__(self, url: str, *, timeout: float = 1.0, prefix: str = PREFIX) -> None:
        self.name = redact_url(url)
        """The URL without its credentials: what log lines and errors show."""
        self._url = url
        self.prefix = prefix
        try:
            self.client: redis.Redis = redis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 0),
            )
        except ValueError as exc:
            raise ValueError(f"{self.name}: {redact_url(url, str(exc))}") from None
        self._lease = self.client.register_script(_LEASE)
        self._release = self.client.register_script(_RELEASE)
        self._reserve = self.client.register_script(_RESERVE)

    def _key(self, kind: str, origin: str) -> str:
        return f"{self.prefix}{kind}:{origin}"

    def _call(self, what: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except redis.RedisError as exc:
            # from None: the driver's own exception might show what was redacted here.
            raise StoreError(self.name, f"{what}: {redact_url(self._url, str(exc))}") from None

    def load(self, origin: str) -> Record | None:
        fields: dict[bytes, bytes] = self._call(
            "load", self.client.hgetall, self._key("robots", origin)
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
        key = self._key("robots", record.origin)
        mapping: dict[str, bytes | str] = {
            "outcome": record.outcome.value,
            "status": "" if record.status is None else str(record.status),
            "url": record.url or "",
            "fetched_at": repr(record.fetched_at),
            "fresh_until": repr(record.fresh_until),
        }
        if record.body is not None:
            mapping["body"] = record.body
        expires = math.ceil((record.fresh_until + KEEP_STALE) * 1000)
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(key)
        pipe.hset(key, mapping=mapping)  # type: ignore[arg-type]
        pipe.pexpireat(key, expires)
        self._call("save", pipe.execute)

    def delete(self, origin: str) -> None:
        self._call("delete", self.client.delete, self._key("robots", origin))

    def lease(self, origin: str, owner: str, seconds: float) -> bool:
        milliseconds = max(1, math.ceil(seconds * 1000))
        taken = self._call(
            "lease", self._lease, keys=[self._key("lease", origin)], args=[owner, milliseconds]
        )
        return bool(taken)

    def release(self, origin: str, owner: str) -> None:
        self._call("release", self._release, keys=[self._key("lease", origin)], args=[owner])

    def reserve(self, origin: str, interval: float) -> float:
        if not (interval >= 0 and math.isfinite(interval)):
            raise ValueError(f"interval must be a finite number of seconds, not {interval!r}")
        wait = self._call(
            "reserve", self._reserve, keys=[self._key("pace", origin)], args=[repr(interval)]
        )
        return max(0.0, float(wait))

    def archive(self, sha256: str, body: bytes) -> None:
        key = self._key("body", sha256)
        self._call("archive", self.client.set, key, body, ex=math.ceil(KEEP_ARCHIVE))

    def archived(self, sha256: str) -> bytes | None:
        body: bytes | None = self._call("archived", self.client.get, self._key("body", sha256))
        return body

    def eviction(self) -> str | None:
        """The server's ``maxmemory-policy`` when it is not ``noeviction``.

        Any other policy lets Redis drop keys under memory pressure, pace
        keys included: fleet-wide turns are then forgotten. A server whose
        ``CONFIG`` command is disabled or renamed cannot say; that is
        reported as a possible eviction too.
        """
        try:
            answer = self.client.config_get("maxmemory-policy")
        except redis.ResponseError as exc:  # CONFIG disabled, renamed or not permitted
            error = redact_url(self._url, str(exc))
            return f"maxmemory-policy cannot be read (CONFIG GET: {error}): it may evict keys"
        except redis.RedisError as exc:
            raise StoreError(self.name, f"eviction: {redact_url(self._url, str(exc))}") from None
        policies = {_text(key): _text(value) for key, value in answer.items()}
        policy = policies.get("maxmemory-policy", "noeviction")
        return None if policy == "noeviction" else f"maxmemory-policy is {policy}: it evicts keys"

    def close(self) -> None:
        self.client.close()


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
