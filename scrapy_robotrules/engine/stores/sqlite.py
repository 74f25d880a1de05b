"""robots.txt records in an SQLite file: kept across restarts, shared by processes on one machine.

SPEC 8: one robots.txt per origin, fetched once for every process.

The file is in WAL mode, so readers never wait for a writer; leases and
paces change inside ``BEGIN IMMEDIATE`` transactions, which SQLite runs one
at a time across processes, so two processes never both take a lease or
book the same turn. Times are this machine's clock, the same for every
process that can open the file.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.stores.interface import KEEP_ARCHIVE, KEEP_STALE, Record, StoreError

__all__ = ["SQLiteBackend"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS robots (
    origin TEXT PRIMARY KEY,
    outcome TEXT NOT NULL,
    body BLOB,
    status INTEGER,
    url TEXT,
    fetched_at REAL NOT NULL,
    fresh_until REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS robots_expires ON robots (expires);
CREATE TABLE IF NOT EXISTS leases (
    origin TEXT PRIMARY KEY, owner TEXT NOT NULL, until REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS paces (origin TEXT PRIMARY KEY, next REAL NOT NULL);
CREATE TABLE IF NOT EXISTS bodies (
    sha256 TEXT PRIMARY KEY, body BLOB NOT NULL, expires REAL NOT NULL
);
"""

_PURGE_EVERY = 1000
"""Saves between two purges of expired records, paces and leases."""


_RETRY_OPEN = 0.01
"""Seconds between tries to open a file another crawler is setting up."""


def _prepare(db: sqlite3.Connection) -> None:
    """WAL (once per file: it stays so), then the tables."""
    if str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(_SCHEMA)


class SQLiteBackend:
    """Records, leases and paces in the SQLite file at ``path`` (created if missing).

    ``name`` is how log lines and errors show the store: the ``ROBOTRULES_STORE``
    value as written (``open_backend`` gives it, its password masked), else
    ``sqlite:`` and the path.
    """

    def __init__(
        self,
        path: str,
        *,
        timeout: float = 1.0,
        clock: Callable[[], float] = time.time,
        name: str | None = None,
    ) -> None:
        self.path = path
        self.name = name if name is not None else f"sqlite:{path}"
        self.timeout = timeout
        self.clock = clock
        self._saves = 0
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            deadline = time.monotonic() + self.timeout
            while True:
                db = None
                try:
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                    db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
                    _prepare(db)
                    break
                except sqlite3.OperationalError as exc:
                    # Crawlers opening a new file at once: the switch to WAL can
                    # be refused at once rather than waited for. Tried again
                    # until the timeout has passed.
                    if db is not None:
                        db.close()
                    if time.monotonic() >= deadline:
                        raise StoreError(self.name, str(exc)) from exc
                    time.sleep(_RETRY_OPEN)
                except (OSError, sqlite3.Error) as exc:
                    raise StoreError(self.name, str(exc)) from exc
            self._db = db
        return self._db

    def _run(self, work: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        db = self._connection()
        try:
            if not write:
                return work(db)
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.DatabaseError) and not isinstance(
                exc, sqlite3.OperationalError
            ):
                self.close()  # corrupt or replaced: open it again next time
            raise StoreError(self.name, str(exc)) from exc

    def load(self, origin: str) -> Record | None:
        row = self._run(
            lambda db: db.execute(
                "SELECT outcome, body, status, url, fetched_at, fresh_until"
                " FROM robots WHERE origin = ?",
                (origin,),
            ).fetchone()
        )
        if row is None:
            return None
        outcome, body, status, url, fetched_at, fresh_until = row
        try:
            return Record(origin, Outcome(outcome), body, status, url, fetched_at, fresh_until)
        except ValueError:
            return None  # written by something else: as if absent, fetched again

    def save(self, record: Record) -> None:
        expires = record.fresh_until + KEEP_STALE
        self._saves += 1
        purge = self._saves % _PURGE_EVERY == 0

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO robots VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.origin,
                    record.outcome.value,
                    record.body,
                    record.status,
                    record.url,
                    record.fetched_at,
                    record.fresh_until,
                    expires,
                ),
            )
            if purge:
                now = self.clock()
                db.execute("DELETE FROM robots WHERE expires < ?", (now,))
                db.execute("DELETE FROM leases WHERE until < ?", (now,))
                db.execute("DELETE FROM paces WHERE next < ?", (now - 3600,))
                db.execute("DELETE FROM bodies WHERE expires < ?", (now,))

        self._run(work, write=True)

    def delete(self, origin: str) -> None:
        self._run(lambda db: db.execute("DELETE FROM robots WHERE origin = ?", (origin,)))

    def lease(self, origin: str, owner: str, seconds: float) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            now = self.clock()
            row = db.execute("SELECT owner, until FROM leases WHERE origin = ?", (origin,))
            held = row.fetchone()
            if held is not None and held[0] != owner and held[1] > now:
                return False
            db.execute(
                "INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (origin, owner, now + seconds)
            )
            return True

        return self._run(work, write=True)

    def release(self, origin: str, owner: str) -> None:
        self._run(
            lambda db: db.execute(
                "DELETE FROM leases WHERE origin = ? AND owner = ?", (origin, owner)
            )
        )

    def reserve(self, origin: str, interval: float) -> float:
        def work(db: sqlite3.Connection) -> float:
            now = self.clock()
            row = db.execute("SELECT next FROM paces WHERE origin = ?", (origin,)).fetchone()
            turn = max(now, row[0]) if row is not None else now
            db.execute("INSERT OR REPLACE INTO paces VALUES (?, ?)", (origin, turn + interval))
            return turn - now

        if not (interval >= 0 and math.isfinite(interval)):
            raise ValueError(f"interval must be a finite number of seconds, not {interval!r}")
        return self._run(work, write=True)

    def archive(self, sha256: str, body: bytes) -> None:
        expires = self.clock() + KEEP_ARCHIVE
        self._run(
            lambda db: db.execute(
                "INSERT INTO bodies VALUES (?, ?, ?)"
                " ON CONFLICT (sha256) DO UPDATE SET expires = excluded.expires",
                (sha256, body, expires),
            )
        )

    def archived(self, sha256: str) -> bytes | None:
        row = self._run(
            lambda db: db.execute(
                "SELECT body FROM bodies WHERE sha256 = ? AND expires >= ?",
                (sha256, self.clock()),
            ).fetchone()
        )
        return None if row is None else bytes(row[0])

    def eviction(self) -> str | None:
        return None  # a file keeps what it is given

    def close(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            finally:
                self._db = None
