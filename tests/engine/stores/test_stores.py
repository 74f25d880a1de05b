"""The persistent and shared stores, against a real SQLite file and a real Redis server."""

from __future__ import annotations

import logging
import multiprocessing
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis

from scrapy_robotrules import RobotRules
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.stores import (
    Backend,
    CachedStore,
    Entry,
    MemoryStore,
    Record,
    StoreError,
    open_backend,
    open_store,
    redact_url,
    store_kind,
)
from scrapy_robotrules.engine.stores import cache as cached_store
from scrapy_robotrules.engine.stores.redis import RedisBackend
from scrapy_robotrules.engine.stores.sqlite import SQLiteBackend
from tests.helpers.redisserver import RedisServer, free_port
from tests.helpers.turns import Turn, assert_turns_apart

ORIGIN = "http://example.com"
RULES = b"User-agent: *\nDisallow: /private\nCrawl-delay: 2\n"


def record(outcome: Outcome = Outcome.RULES, body: bytes | None = RULES, **kw: float) -> Record:
    now = time.time()
    return Record(
        ORIGIN,
        outcome,
        body,
        kw.get("status", 200),  # type: ignore[arg-type]
        f"{ORIGIN}/robots.txt",
        kw.get("fetched_at", now),
        kw.get("fresh_until", now + 3600),
    )


class TestStoreUrls:
    @pytest.mark.parametrize(
        ("url", "kind"),
        [
            ("memory", "memory"),
            ("sqlite:///srv/robots.db", "sqlite"),
            ("sqlite:robots.db", "sqlite"),
            ("redis://localhost:6379/0", "redis"),
            ("rediss://user:secret@cache:6380/2", "redis"),
            ("unix:///run/redis.sock", "redis"),
        ],
    )
    def test_kinds(self, url: str, kind: str) -> None:
        assert store_kind(url) == kind

    @pytest.mark.parametrize(
        "url",
        ["", "memcached://x", "sqlite://host/robots.db", "sqlite:", "robots.db", "Memory"],
    )
    def test_not_a_store(self, url: str) -> None:
        with pytest.raises(ValueError, match="not a store"):
            store_kind(url)

    def test_sqlite_paths(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        absolute = open_backend(f"sqlite://{tmp_path}/a.db")
        assert isinstance(absolute, SQLiteBackend)
        assert absolute.path == f"{tmp_path}/a.db"
        monkeypatch.chdir(tmp_path)
        relative = open_backend("sqlite:sub/b.db")
        assert isinstance(relative, SQLiteBackend)
        assert relative.path == "sub/b.db"
        relative.save(record())
        assert (tmp_path / "sub" / "b.db").exists()

    @pytest.mark.parametrize(
        ("url", "shown", "secret"),
        [
            ("redis://:s3cret@cache:6379/0", "redis://***@cache:6379/0", "s3cret"),
            ("redis://bob:s3cret@cache/0", "redis://***@cache/0", "s3cret"),
            ("redis://cache/0?password=s3cret", "redis://cache/0?password=***", "s3cret"),
            (
                "redis://cache/0?username=bob&password=s3cret",
                "redis://cache/0?username=***&password=***",
                "s3cret",
            ),
            ("rediss://bob:s3cret@cache:6380/2", "rediss://***@cache:6380/2", "s3cret"),
            ("unix://:s3cret@/run/redis.sock?db=1", "unix://***@/run/redis.sock?db=1", "s3cret"),
            (
                "unix:///run/redis.sock?db=1&password=s3cret",
                "unix:///run/redis.sock?db=1&password=***",
                "s3cret",
            ),
            ("redis://:s3%40cret@cache/0", "redis://***@cache/0", "s3@cret"),
            ("redis://:s3@cret@cache/0", "redis://***@cache/0", "s3@cret"),
        ],
    )
    def test_credentials_are_never_shown(self, url: str, shown: str, secret: str) -> None:
        assert redact_url(url) == shown
        if store_kind(url) == "redis":
            assert RedisBackend(url).name == shown
        # A driver's message may quote the URL or the password itself.
        quoted = f"failed: {url} said AUTH {secret}"
        assert redact_url(url, quoted) == f"failed: {shown} said AUTH ***"

    @pytest.mark.parametrize("url", ["redis://cache:6379/0", "sqlite:///srv/robots.db", "memory"])
    def test_urls_without_credentials_are_shown_as_they_are(self, url: str) -> None:
        assert redact_url(url) == url

    @pytest.mark.parametrize(
        ("form", "shown"),
        [
            ("sqlite:///{path}", "sqlite:///{path}"),  # four slashes before an absolute path
            ("sqlite://{path}", "sqlite://{path}"),  # three
            ("sqlite://{path}?password=s3cret", "sqlite://{path}?password=***"),
        ],
        ids=["four-slashes", "three-slashes", "password"],
    )
    def test_a_store_that_fails_is_logged_as_written(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture, form: str, shown: str
    ) -> None:
        path = tmp_path / "robots.db"
        path.write_bytes(b"not a database\n" * 100)
        url = form.format(path=path)
        store = CachedStore(open_backend(url, timeout=0.5))
        assert store.backend.name == shown.format(path=path)
        with caplog.at_level(logging.WARNING):
            assert store.get(ORIGIN) is None
        [line] = [r.getMessage() for r in caplog.records if "failed" in r.getMessage()]
        assert line.startswith(f"robots.txt store {shown.format(path=path)} failed (")
        assert "s3cret" not in line


class TestBackends:
    def test_round_trip(self, backend: Backend) -> None:
        assert backend.load(ORIGIN) is None
        for saved in (
            record(),
            record(Outcome.ALLOW_ALL, None, status=404),
            record(Outcome.UNREACHABLE, RULES, status=503),
            record(Outcome.DISALLOW_ALL, None, status=403),
            record(Outcome.RULES, b""),
        ):
            backend.save(saved)
            assert backend.load(ORIGIN) == saved
        backend.delete(ORIGIN)
        assert backend.load(ORIGIN) is None

    def test_binary_body_kept_byte_for_byte(self, backend: Backend) -> None:
        body = bytes(range(256)) * 10 + b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /\x00"
        backend.save(record(body=body))
        loaded = backend.load(ORIGIN)
        assert loaded is not None
        assert loaded.body == body

    def test_lease_is_exclusive_until_released(self, backend: Backend) -> None:
        assert backend.lease(ORIGIN, "a", 30)
        assert not backend.lease(ORIGIN, "b", 30)
        assert backend.lease(ORIGIN, "a", 30)  # renewed by its holder
        backend.release(ORIGIN, "b")  # not b's to release
        assert not backend.lease(ORIGIN, "b", 30)
        backend.release(ORIGIN, "a")
        assert backend.lease(ORIGIN, "b", 30)
        assert backend.lease("http://other.example", "a", 30)  # leases are per origin

    def test_lease_of_a_crashed_holder_expires(self, backend: Backend) -> None:
        assert backend.lease(ORIGIN, "crashed", 60)
        assert not backend.lease(ORIGIN, "b", 30)
        # Its last renewal, for 0.2 s: then it crashed.
        assert backend.lease(ORIGIN, "crashed", 0.2)
        time.sleep(0.3)
        assert backend.lease(ORIGIN, "b", 30)

    def test_reserve_books_turns_an_interval_apart(self, backend: Backend) -> None:
        turns = [_book(backend, 10.0) for _ in range(3)]
        assert turns[0].wait == 0  # the first turn is now
        for n, turn in enumerate(turns):
            # Each turn 10 s after the one before, however long the calls took.
            assert turn.earliest - turns[0].latest <= 10.0 * n + 1e-5
            assert turn.latest - turns[0].earliest >= 10.0 * n - 1e-5
        assert backend.reserve("http://other.example", 10.0) == 0

    def test_reserve_across_processes(self, store_url: str) -> None:
        """Four processes booking at once get distinct turns, each an interval apart."""
        interval = 10.0  # booked, not waited for
        context = multiprocessing.get_context("spawn")
        with context.Pool(4) as pool:
            batches = pool.starmap(_book_turns, [(store_url, interval, 10)] * 4)
        turns = [turn for batch in batches for turn in batch]
        assert len(turns) == 40
        # Turns an interval apart exist within what each process saw.
        assert_turns_apart(turns, interval)


def _book(backend: Backend, interval: float) -> Turn:
    before = time.time()
    wait = backend.reserve(ORIGIN, interval)
    return Turn(before, wait, time.time())


def _book_turns(url: str, interval: float, count: int) -> list[Turn]:
    backend = open_backend(url, timeout=5.0)
    turns = [_book(backend, interval) for _ in range(count)]
    backend.close()
    return turns


class Clock:
    """A clock that moves only when a test moves it."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Events(Counter[str]):
    def __call__(self, name: str) -> None:
        self[name] += 1


def cached(url: str, events: Callable[[str], None] | None = None, **kw: object) -> CachedStore:
    store = open_store(url, on_event=events)
    assert isinstance(store, CachedStore)
    for name, value in kw.items():
        setattr(store, name, value)
    return store


class TestCachedStore:
    def test_one_process_sees_what_another_fetched(self, store_url: str) -> None:
        first, second_events = RobotRules("bot", store=store_url), Events()
        first.parse(f"{ORIGIN}/robots.txt", RULES)
        second = RobotRules("bot", store=cached(store_url, second_events))
        assert second.allowed(f"{ORIGIN}/private") is False
        assert second.allowed(f"{ORIGIN}/public") is True
        assert second.crawl_delay(ORIGIN) == 2
        assert second_events == {"hits": 1}  # then decided from its own cache

    def test_miss_is_asked_again_only_after_recheck(self, store_url: str) -> None:
        events, clock = Events(), Clock(time.time())
        store = cached(store_url, events, recheck=0.2, clock=clock)
        assert store.get(ORIGIN) is None
        clock.now += 0.19
        assert store.get(ORIGIN) is None
        assert events == {"misses": 1}
        clock.now += 0.02
        assert store.get(ORIGIN) is None
        assert events == {"misses": 2}

    def test_stale_here_fresh_there_is_taken(self, store_url: str) -> None:
        here = cached(store_url, recheck=0)
        there = cached(store_url)
        now = time.time()
        here.put(_entry(Outcome.RULES, now - 100, now - 1), b"User-agent: *\nDisallow: /old\n")
        there.put(_entry(Outcome.RULES, now, now + 60), b"User-agent: *\nDisallow: /new\n")
        entry = here.get(ORIGIN)
        assert entry is not None
        assert entry.is_fresh(time.time())
        assert not entry.allowed(f"{ORIGIN}/new", "bot", "most-specific", "token")
        assert entry.allowed(f"{ORIGIN}/old", "bot", "most-specific", "token")

    def test_unreachable_keeps_the_earlier_file(self, store_url: str) -> None:
        db = RobotRules("bot", store=store_url)
        db.parse(f"{ORIGIN}/robots.txt", RULES)
        earlier = db.entry(ORIGIN)
        assert earlier is not None
        db.put(f"{ORIGIN}/robots.txt", Outcome.UNREACHABLE, earlier.robots, status=503)
        other = RobotRules("bot", store=store_url)
        entry = other.entry(ORIGIN)
        assert entry is not None
        assert entry.outcome is Outcome.UNREACHABLE
        assert other.allowed(f"{ORIGIN}/private") is False
        assert other.allowed(f"{ORIGIN}/public") is True

    def test_outcomes_without_a_file(self, store_url: str) -> None:
        RobotRules("bot", store=store_url).put(
            f"{ORIGIN}/robots.txt", Outcome.DISALLOW_ALL, status=401
        )
        entry = RobotRules("bot", store=store_url).entry(ORIGIN)
        assert entry is not None
        assert entry.outcome is Outcome.DISALLOW_ALL
        assert entry.status == 401
        assert entry.robots is None

    def test_records_are_the_same_for_every_agent(self, store_url: str) -> None:
        RobotRules("bot", store=store_url).parse(
            f"{ORIGIN}/robots.txt", b"User-agent: a\nDisallow: /\n\nUser-agent: b\nAllow: /\n"
        )
        assert RobotRules("a", store=store_url).allowed(f"{ORIGIN}/x") is False
        assert RobotRules("b", store=store_url).allowed(f"{ORIGIN}/x") is True

    def test_truncated_files_stay_truncated(self, store_url: str) -> None:
        big = b"User-agent: *\n" + b"Disallow: /x\n" * 1000
        db = RobotRules("bot", store=store_url, max_size=100)
        first = db.parse(f"{ORIGIN}/robots.txt", big)
        entry = RobotRules("bot", store=store_url, max_size=100).entry(ORIGIN)
        assert first.truncated
        assert entry is not None
        assert entry.robots is not None
        assert entry.robots.truncated

    def test_forget_deletes_everywhere(self, store_url: str) -> None:
        db = RobotRules("bot", store=store_url)
        db.parse(f"{ORIGIN}/robots.txt", RULES)
        db.forget(ORIGIN)
        assert RobotRules("bot", store=store_url).allowed(ORIGIN) is None

    def test_sqlite_survives_a_restart(self, tmp_path: Path) -> None:
        url = f"sqlite://{tmp_path}/robots.db"
        db = RobotRules("bot", store=url)
        db.parse(f"{ORIGIN}/robots.txt", RULES, fresh_until=time.time() + 60)
        assert isinstance(db.store, CachedStore)
        db.store.close()
        again = RobotRules("bot", store=url)
        assert again.allowed(f"{ORIGIN}/private") is False
        assert len(again) == 1

    def test_records_written_by_something_else_are_absent(self, redis_server: RedisServer) -> None:
        client = redis.Redis.from_url(redis_server.url)
        client.hset("robotrules:robots:{http://x.example}", mapping={"outcome": "bogus"})
        assert open_backend(redis_server.url).load("http://x.example") is None


def _entry(outcome: Outcome, fetched_at: float, fresh_until: float) -> Entry:
    from scrapy_robotrules.engine.robots.robotstxt import RobotsTxt

    robots = RobotsTxt.parse(b"") if outcome is Outcome.RULES else None
    return Entry(ORIGIN, outcome, robots, fetched_at=fetched_at, fresh_until=fresh_until)


class TestFallback:
    def test_redis_down_then_back(
        self,
        redis_server: RedisServer,
        caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        # The store's retry clock moves only when the test says.
        monotonic = Clock(time.monotonic())
        monkeypatch.setattr(
            cached_store, "time", SimpleNamespace(monotonic=monotonic, time=time.time)
        )
        events = Events()
        store = cached(redis_server.url, events, retry_after=0.3)
        db = RobotRules("bot", store=store)
        redis_server.stop()
        with caplog.at_level(logging.INFO, logger="scrapy_robotrules.engine.stores.cache"):
            assert db.allowed(f"{ORIGIN}/private") is None  # not "allowed"
            db.parse(f"{ORIGIN}/robots.txt", RULES)  # kept in memory meanwhile
            assert db.allowed(f"{ORIGIN}/private") is False
            assert store.lease(ORIGIN, "me", 10) is None
            assert store.reserve(ORIGIN, 1.0) is None
            warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
            assert len(warnings) == 1
            assert "in-process memory store" in warnings[0].getMessage()
            # The store named once, without its password; the failed call once.
            assert warnings[0].getMessage().count(redis_server.url) == 1
            assert warnings[0].getMessage().count("load") == 1
            assert events["errors"] == 1  # then no call until retry_after
            redis_server.start()
            monotonic.now += 0.29
            assert store.get("http://new.example") is None  # not asked yet
            assert events["errors"] == 1
            assert not [r for r in caplog.records if r.levelno == logging.INFO]
            monotonic.now += 0.02
            assert store.get("http://new.example") is None  # asks again, succeeds
            [back] = [r for r in caplog.records if r.levelno == logging.INFO]
            assert "answers again" in back.getMessage()
        # What was fetched while it was down has been written back.
        assert RobotRules("bot", store=redis_server.url).allowed(f"{ORIGIN}/private") is False

    def test_unopenable_sqlite_file(self, tmp_path: Path) -> None:
        (tmp_path / "file").write_text("not a directory")
        events = Events()
        db = RobotRules("bot", store=cached(f"sqlite://{tmp_path}/file/robots.db", events))
        db.parse(f"{ORIGIN}/robots.txt", RULES)
        assert db.allowed(f"{ORIGIN}/private") is False
        assert events["errors"] == 1

    def test_corrupt_sqlite_file(self, tmp_path: Path) -> None:
        path = tmp_path / "robots.db"
        path.write_bytes(b"this is no database" * 100)
        events = Events()
        store = cached(f"sqlite://{path}", events)
        assert store.get(ORIGIN) is None
        assert events["errors"] == 1

    def test_backend_errors_are_store_errors(self) -> None:
        backend = open_backend(f"redis://127.0.0.1:{free_port()}/0", timeout=0.2)
        with pytest.raises(StoreError, match="load"):
            backend.load(ORIGIN)


def test_memory_store_is_the_default() -> None:
    assert isinstance(RobotRules("bot").store, MemoryStore)
    assert isinstance(open_store("memory"), MemoryStore)


def test_a_record_kept_from_an_outage_never_overwrites_a_newer_one(
    redis_server: RedisServer,
) -> None:
    store = cached(redis_server.url, retry_after=0.0)
    now = time.time()
    redis_server.stop()
    store.put(_entry(Outcome.ALLOW_ALL, now, now + 60))  # kept to be written back
    redis_server.start()
    store.put(_entry(Outcome.DISALLOW_ALL, now + 1, now + 61))  # saved, and written back after
    record = open_backend(redis_server.url).load(ORIGIN)
    assert record is not None
    assert record.outcome is Outcome.DISALLOW_ALL


SECRET = "s3cret-pw"
ROBOT_SECRET = "r0b0t-pw"


@pytest.fixture
def locked_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis server asking for a password: of the default user, or of the ACL user ``robot``."""
    socket = tmp_path / "redis.sock"
    server = RedisServer(
        tmp_path,
        [
            "--requirepass",
            SECRET,
            "--user",
            "robot",
            "on",
            f">{ROBOT_SECRET}",
            "~*",
            "&*",
            "+@all",
            "--unixsocket",
            str(socket),
        ],
    )
    server.start()
    yield server
    server.stop()


def _credential_urls(server: RedisServer, secret: str, robot_secret: str) -> list[str]:
    host = f"127.0.0.1:{server.port}"
    socket = server.directory / "redis.sock"
    return [
        f"redis://:{secret}@{host}/0",
        f"redis://robot:{robot_secret}@{host}/0",
        f"redis://{host}/0?password={secret}",
        f"unix://:{secret}@{socket}?db=0",
        f"unix://{socket}?db=0&password={secret}",
    ]


class TestCredentials:
    """Every form of a Redis password works, and none reaches a log line, a stat or an error."""

    def test_every_form_reaches_the_server(self, locked_redis: RedisServer) -> None:
        for url in _credential_urls(locked_redis, SECRET, ROBOT_SECRET):
            backend = open_backend(url)
            backend.save(record())
            assert backend.load(ORIGIN) == record()._replace(
                fetched_at=backend.load(ORIGIN).fetched_at,  # type: ignore[union-attr]
                fresh_until=backend.load(ORIGIN).fresh_until,  # type: ignore[union-attr]
            ), url
            backend.close()

    def test_a_failing_store_shows_no_password(
        self, locked_redis: RedisServer, caplog: pytest.LogCaptureFixture
    ) -> None:
        wrong, robot_wrong = "wr0ng-leaked-pw", "wr0ng-robot-pw"
        urls = _credential_urls(locked_redis, wrong, robot_wrong)
        # TLS to a server that speaks none: fails with the right password.
        urls.append(f"rediss://robot:{ROBOT_SECRET}@127.0.0.1:{locked_redis.port}/0")
        secrets = (wrong, robot_wrong, ROBOT_SECRET)
        for url in urls:
            caplog.clear()
            backend = open_backend(url, timeout=0.5)
            with pytest.raises(StoreError) as raised:
                backend.load(ORIGIN)
            message = str(raised.value)
            assert raised.value.__cause__ is None
            assert raised.value.__context__ is not None
            events = Events()
            store = CachedStore(open_backend(url, timeout=0.5), on_event=events)
            with caplog.at_level(logging.DEBUG):
                assert store.get(ORIGIN) is None
            logged = [r.getMessage() for r in caplog.records]
            assert any("failed" in line for line in logged), url
            assert events["errors"] == 1
            for secret in secrets:
                assert secret not in message, (url, message)
                assert not any(secret in line for line in logged), (url, logged)
                assert not any(secret in name for name in events), events
            assert "***" in message
            assert "***" in store.backend.name


def test_a_sqlite_file_being_set_up_by_another_crawler_is_opened_once_it_is_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Several crawlers opening a new file at once: one switches it to WAL,
    # and another may be refused at once ("database is locked") instead of
    # waiting. A CI run saw it with four processes on a loaded machine.
    from scrapy_robotrules.engine.stores import sqlite as sqlite_store

    prepare = sqlite_store._prepare
    refusals = [sqlite3.OperationalError("database is locked")] * 2

    def busy_at_first(db: sqlite3.Connection) -> None:
        if refusals:
            raise refusals.pop()
        prepare(db)

    monkeypatch.setattr(sqlite_store, "_prepare", busy_at_first)
    backend = SQLiteBackend(str(tmp_path / "robots.db"), timeout=5.0)
    assert backend.reserve(ORIGIN, 10.0) == 0
    assert not refusals
    backend.close()
    # Past the timeout, it is a store error, as before.
    refusals[:] = [sqlite3.OperationalError("database is locked")] * 1000
    late = SQLiteBackend(str(tmp_path / "other.db"), timeout=0.05)
    with pytest.raises(StoreError, match="locked"):
        late.reserve(ORIGIN, 10.0)


def test_an_entry_s_generation_is_never_given_again() -> None:
    """A decision carries its entry's generation: one freed entry's memory (and so its
    ``id()``) may go to the next entry made, its generation never does."""
    seen: dict[int, int] = {}
    reused = False
    for _ in range(200):
        entry = Entry(ORIGIN, Outcome.ALLOW_ALL, None, fetched_at=1.0, fresh_until=2.0)
        if id(entry) in seen:
            reused = True
            assert seen[id(entry)] != entry.generation
        assert entry.generation not in seen.values()
        seen[id(entry)] = entry.generation
        del entry
    assert reused  # the case the generation is for did happen
