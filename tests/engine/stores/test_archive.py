"""The archive of robots.txt bodies by SHA-256, on a real SQLite file and Redis server.

And ``robotrules archive``, which prints an archived body byte for byte.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
import redis

from scrapy_robotrules.engine.stores import (
    KEEP_ARCHIVE,
    Backend,
    CachedStore,
    StoreError,
    open_backend,
)
from scrapy_robotrules.engine.stores.redis import PREFIX
from scrapy_robotrules.engine.stores.sqlite import SQLiteBackend
from tests.helpers.cli import run_binary as run
from tests.helpers.redisserver import RedisServer, free_port

BODY = b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /priv\xe9\x00\n"
SHA = hashlib.sha256(BODY).hexdigest()


class TestBackends:
    def test_a_body_comes_back_byte_for_byte_by_its_sha256(self, backend: Backend) -> None:
        assert backend.archived(SHA) is None
        backend.archive(SHA, BODY)
        assert backend.archived(SHA) == BODY

    def test_archiving_again_is_one_copy(self, backend: Backend, store_url: str) -> None:
        backend.archive(SHA, BODY)
        backend.archive(SHA, BODY)
        assert backend.archived(SHA) == BODY
        if isinstance(backend, SQLiteBackend):
            with sqlite3.connect(backend.path) as db:
                assert db.execute("SELECT count(*) FROM bodies").fetchone() == (1,)
        else:
            client = redis.Redis.from_url(store_url)
            assert client.keys(f"{PREFIX}body:*") == [f"{PREFIX}body:{SHA}".encode()]

    def test_bodies_expire_keep_archive_after_last_archived(self, tmp_path: Path) -> None:
        now = [1000.0]
        backend = SQLiteBackend(str(tmp_path / "robots.db"), clock=lambda: now[0])
        backend.archive(SHA, BODY)
        now[0] += KEEP_ARCHIVE - 1
        backend.archive(SHA, BODY)  # fetched again: kept longer
        now[0] += KEEP_ARCHIVE - 1
        assert backend.archived(SHA) == BODY
        now[0] += 2
        assert backend.archived(SHA) is None

    def test_redis_bodies_have_a_ttl(self, redis_server: RedisServer) -> None:
        backend = open_backend(redis_server.url)
        backend.archive(SHA, BODY)
        ttl = redis.Redis.from_url(redis_server.url).ttl(f"{PREFIX}body:{SHA}")
        assert KEEP_ARCHIVE - 60 < ttl <= KEEP_ARCHIVE

    def test_kept_across_a_reopened_file(self, tmp_path: Path) -> None:
        url = f"sqlite://{tmp_path}/robots.db"
        first = open_backend(url)
        first.archive(SHA, BODY)
        first.close()
        assert open_backend(url).archived(SHA) == BODY

    def test_an_unreachable_server_is_a_store_error(self) -> None:
        backend = open_backend(f"redis://127.0.0.1:{free_port()}/0", timeout=0.2)
        with pytest.raises(StoreError, match="archive"):
            backend.archive(SHA, BODY)


def test_cached_store_passes_through_and_never_fails(redis_server: RedisServer) -> None:
    events: list[str] = []
    store = CachedStore(open_backend(redis_server.url, timeout=0.2), on_event=events.append)
    assert store.archive(SHA, BODY) is True
    assert store.archived(SHA) == BODY
    redis_server.stop()
    assert store.archive(SHA, BODY) is False
    assert store.archived(SHA) is None
    assert events == ["errors"]  # then the backend rests, as for its other calls


class TestCommand:
    def test_prints_the_body_byte_for_byte(
        self, store_url: str, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        open_backend(store_url).archive(SHA, BODY)
        assert run(capsysbinary, "archive", store_url, SHA.upper()) == (0, BODY, "")

    def test_an_absent_body_exits_1_saying_so(
        self, store_url: str, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        open_backend(store_url).archive(SHA, BODY)
        other = hashlib.sha256(b"other").hexdigest()
        code, out, err = run(capsysbinary, "archive", store_url, other)
        assert (code, out) == (1, b"")
        assert f"no robots.txt archived under {other}" in err

    def test_a_missing_sqlite_file_is_not_created(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        code, out, err = run(capsysbinary, "archive", f"sqlite://{tmp_path}/none.db", SHA)
        assert (code, out) == (2, b"")
        assert "no such file" in err
        assert not (tmp_path / "none.db").exists()

    @pytest.mark.parametrize(
        ("store", "sha", "says"),
        [
            ("memory", SHA, "memory store keeps no archive"),
            ("ftp://bob:s3cret@host/x", SHA, "not a store"),
            ("sqlite:robots.db", "abc", "not a SHA-256"),
        ],
    )
    def test_usage_errors(
        self, capsysbinary: pytest.CaptureFixture[bytes], store: str, sha: str, says: str
    ) -> None:
        code, out, err = run(capsysbinary, "archive", store, sha)
        assert (code, out) == (2, b"")
        assert says in err
        assert "s3cret" not in err

    def test_an_unreachable_server_is_named_without_its_password(
        self, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        url = f"redis://bob:s3cret@127.0.0.1:{free_port()}/0"
        code, out, err = run(capsysbinary, "archive", url, SHA)
        assert (code, out) == (2, b"")
        assert "cannot read redis://***@127.0.0.1" in err
        assert "s3cret" not in err
        assert err.count("redis://") == 1, err  # the store named once
        assert err.count("archived") == 1, err  # and the call that failed

    def test_a_corrupt_sqlite_file_is_named_once(
        self, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
    ) -> None:
        path = tmp_path / "robots.db"
        path.write_bytes(b"not a database" * 100)
        code, out, err = run(capsysbinary, "archive", f"sqlite:///{path}", SHA)
        assert (code, out) == (2, b"")
        assert err.startswith(f"robotrules: error: cannot read sqlite:///{path}: file is not a")
        assert err.count("sqlite:") == 1, err
