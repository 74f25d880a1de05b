"""The audit trail of a crawl (``ROBOTRULES_AUDIT``): its lines, written in a thread.

One JSON line per decided request, one per robots.txt fetch and one per
file replaced by another, built by
:mod:`scrapy_robotrules.engine.operator_tools.audit_trail` (which keeps credentials out of them).
The trail goes where Scrapy's feed storages put a feed: a path, ``file://``,
``s3://``, ``ftp://``... (``FEED_STORAGES``), chosen and built as Scrapy's
``FeedExporter`` does. Lines are handed to a thread a batch at a time, so
the crawl's loop (a reactor's, or asyncio's without one) never waits on
the disk; at most ``ROBOTRULES_AUDIT_BUFFER`` lines wait in memory. Past
that the writer has fallen behind, and the next batch is written on the
loop's thread (counted ``audit/sync_writes``): slower, but no line is ever
lost. Everything is flushed when the spider closes.

A file is written in whole lines only: a write that fails part way (a full
disk) is cut back to the last whole line, and from then on lines are
counted, not written. ``audit/lines`` counts the lines stored, once the
storage stored the file (an upload, for remote ones); ``audit/lost`` the
lines that were not.

SPEC 7 (what decided, written down) and 8 (each fetch and its outcome).
"""

from __future__ import annotations

import io
import logging
import threading
import time
from collections import OrderedDict, deque
from typing import IO, TYPE_CHECKING, Any, Protocol

from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import Deferred

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.crawl.config.values import RobotRulesSettingError, storage_class
from scrapy_robotrules.crawl.requestmeta import origin_for
from scrapy_robotrules.engine.digests import sha256_of
from scrapy_robotrules.engine.operator_tools.audit_trail import (
    SHADOW,
    change_line,
    fetch_line,
    request_line,
    text_without_credentials,
    url_without_credentials,
)
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotrules.crawl.config.operator import OperatorConfig
    from scrapy_robotrules.crawl.config.policy_lookup import SitePolicies
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.database import RobotRules
    from scrapy_robotrules.engine.robots.robotstxt import Decision
    from scrapy_robotrules.engine.robots.rule_changes import FileChange as Change
    from scrapy_robotrules.engine.stores import Entry

__all__ = ["AuditReporter", "AuditTrail", "AuditWriter"]


class AuditReporter(Protocol):
    """What the trail tells the reporter (which holds the trail: given, not imported)."""

    @property
    def spider(self) -> dict[str, object]: ...

    def inc(self, key: str, by: int = ...) -> None: ...


logger = logging.getLogger(__name__)

BATCH = 1000
"""Lines handed to the writer thread at once (fewer when the buffer is smaller)."""
FLUSH_AFTER = 1.0
"""Seconds a line waits at most before its batch goes to the thread, in a slow crawl."""
KNOWN_FILES = 100_000
"""Origins whose latest robots.txt SHA-256 is kept for the request lines."""


class AuditWriter:
    """Lines to one open file, written in order by a thread, a batch at a time, whole."""

    def __init__(
        self, file: IO[bytes], *, cap: int, on_sync: Callable[[], None] | None = None
    ) -> None:
        self.file = file
        self.cap = cap
        self.batch = max(1, min(BATCH, cap))
        self._on_sync = on_sync
        self._raw = _unbuffered(file)
        self._buffer: list[str] = []
        self._pending: deque[list[str]] = deque()
        self._pending_lines = 0
        self._lock = threading.Lock()
        """Held while a batch is taken and written: one writer at a time, in order."""
        self._worker: Deferred[None] | None = None
        self._timer: Any = None
        self.error: BaseException | None = None
        """Why the file could not be written; lines after it are counted, not written."""
        self.written = 0
        """Lines written whole to the file."""
        self.lost = 0
        """Lines not written (the rest of the batch that failed, and every one after it)."""

    def add(self, line: str) -> None:
        buffer = self._buffer
        buffer.append(line)
        if len(buffer) >= self.batch:
            self.hand_over()
        elif self._timer is None:
            self._timer = compat.call_later(FLUSH_AFTER, self._flush_timer)

    def _flush_timer(self) -> None:
        self._timer = None
        self.hand_over()

    def hand_over(self) -> None:
        """The buffered lines go to the writer thread (or, past the cap, straight to the file)."""
        if not self._buffer:
            return
        batch, self._buffer = self._buffer, []
        with self._lock:
            self._pending.append(batch)
            self._pending_lines += len(batch)
            behind = self._pending_lines > self.cap
        if behind:
            self._drain()  # on this thread: every earlier batch first, then this one
            if self._on_sync is not None:
                self._on_sync()
        elif self._worker is None:
            self._start_worker()

    def _start_worker(self) -> None:
        worker = self._worker = compat.in_thread(self._drain)

        def done(_: object) -> None:
            self._worker = None
            with self._lock:
                more = bool(self._pending)
            if more:
                self._start_worker()

        worker.addBoth(done)

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    return
                batch = self._pending.popleft()
                self._pending_lines -= len(batch)
                if self.error is not None:
                    self.lost += len(batch)
                    continue
                data = "".join(f"{line}\n" for line in batch).encode("ascii")
                try:
                    whole = self._write(data)
                except _Failed as failed:  # a full disk, a closed pipe: the crawl goes on
                    self.error = failed.error
                    self.written += failed.whole
                    self.lost += len(batch) - failed.whole
                else:
                    self.written += whole

    def _write(self, data: bytes) -> int:
        """Write ``data`` (whole lines); the lines written. Raises :class:`_Failed`.

        Through the unbuffered stream under the file when it has one, so that
        what reached the file is known to the byte: a write that failed part
        way is cut back to the last whole line (when the file can seek).
        """
        raw = self._raw
        if raw is None:
            try:
                self.file.write(data)
            except Exception as exc:  # how much of it went in is not known: none is counted
                raise _Failed(exc, 0) from None
            return data.count(b"\n")
        done = 0
        view = memoryview(data)
        try:
            while done < len(data):
                count = raw.write(view[done:])
                if count is None:  # a non-blocking file that could take nothing now
                    raise BlockingIOError("the audit file took no bytes")
                done += count
        except Exception as exc:
            cut = data.rfind(b"\n", 0, done) + 1
            if cut < done:
                _cut_torn_line(raw, done - cut)
            raise _Failed(exc, data.count(b"\n", 0, cut)) from None
        return data.count(b"\n")

    async def close(self) -> None:
        """Every line written (in the thread), the file flushed."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.hand_over()
        while self._worker is not None:
            await maybe_deferred_to_future(self._worker)
        await maybe_deferred_to_future(compat.in_thread(self._drain_and_flush))

    def _drain_and_flush(self) -> None:
        self._drain()
        if self.error is None:
            try:
                self.file.flush()
            except Exception as exc:
                self.error = exc


def _cut_torn_line(raw: io.RawIOBase, torn: int) -> None:
    """Take the ``torn`` bytes just written (a line's start) off the end of the file.

    Only while they are still its end: a trail is appended to, and another
    crawl may share it. Where the file cannot seek or be cut, they stay (and
    are not counted).
    """
    try:
        end = raw.tell()
        if raw.seek(0, io.SEEK_END) == end >= torn:
            raw.truncate(end - torn)
            raw.seek(end - torn)
    except (OSError, ValueError):
        pass


class _Failed(Exception):
    """A write that failed, after ``whole`` of its lines were written."""

    def __init__(self, error: BaseException, whole: int) -> None:
        super().__init__(error)
        self.error = error
        self.whole = whole


def _unbuffered(file: IO[bytes]) -> io.RawIOBase | None:
    """The raw stream under a buffered file (``open()``'s, a temporary file's), flushed.

    The writer writes through it: a buffered file that fails part way keeps
    bytes in its buffer that a later flush (at close) would write torn.
    """
    raw = getattr(file, "raw", None)
    if not isinstance(raw, io.RawIOBase):
        return None
    file.flush()
    return raw


class AuditTrail:
    """The audit lines of one crawler: what each decision and fetch says, where it goes."""

    def __init__(
        self,
        crawler: Crawler,
        uri: str,
        *,
        cap: int,
        mode: str,
        db: RobotRules,
        reporter: AuditReporter,
    ) -> None:
        self.crawler = crawler
        self.mode = mode
        self.db = db
        self.reporter = reporter
        try:
            cls = load_object(storage_class(crawler.settings, uri))
            self.storage = build_from_crawler(cls, crawler, uri, feed_options={"overwrite": False})
            self.file: IO[bytes] = self.storage.open(crawler.spider)
        except Exception as exc:  # a directory that cannot be made, a storage without its library
            error = RobotRulesSettingError(
                f"ROBOTRULES_AUDIT: cannot open {url_without_credentials(uri)!r}"
                f" ({type(exc).__name__}: {text_without_credentials(str(exc))})"
            )
            logger.error("%(error)s: the crawl cannot start", {"error": error})
            raise error from None
        self.writer = AuditWriter(self.file, cap=cap, on_sync=self._synced)
        self._files: OrderedDict[str, tuple[float, str, bytes | None]] = OrderedDict()
        """Per origin: fetch time, SHA-256 and (until its fetch line) the body parsed."""
        self.policies: SitePolicies | None = None
        """``ROBOTRULES_POLICIES``, set by the manager: each line names the policy that applied."""

    @classmethod
    def from_config(
        cls,
        crawler: Crawler,
        config: OperatorConfig,
        *,
        db: RobotRules,
        reporter: Reporter,
        policies: SitePolicies | None,
    ) -> AuditTrail | None:
        """The trail ``ROBOTRULES_AUDIT`` asks for, if any: given to each part that writes to it."""
        if config.audit is None:
            return None
        trail = cls(
            crawler,
            config.audit,
            cap=config.audit_buffer,
            mode=config.mode,
            db=db,
            reporter=reporter,
        )
        trail.policies = policies
        return trail

    def _policy(self, origin: str) -> str | None:
        policies = self.policies
        if policies is None or not policies.any or not origin:
            return None
        policy = policies.for_origin(origin)
        return policy.pattern if policy is not None else None

    def _synced(self) -> None:
        self.reporter.inc("audit/sync_writes")

    def _add(self, line: str) -> None:
        self.writer.add(line)

    def request(self, request: Request, decision: Decision, verdict: str) -> None:
        """The line of a decided request: ``allowed``, ``forbidden`` or ``unreachable``."""
        try:
            origin = origin_for(request)
        except ValueError:
            origin = ""
        entry = self.db.store.get(origin) if origin else None
        outcome = Outcome.RULES.value if entry is None else entry.outcome.value
        if verdict == "unreachable":
            outcome = Outcome.UNREACHABLE.value
        sha, fetched_at = None, None
        if entry is not None:
            fetched_at = entry.fetched_at
            known = self._files.get(origin)
            if known is not None and known[0] == entry.fetched_at:
                sha = known[1]
        line = request_line(
            decision,
            origin=origin,
            at=time.time(),
            mode=self.mode,
            verdict=verdict,
            outcome=outcome,
            robots_sha256=sha,
            fetched_at=fetched_at,
            policy=self._policy(origin),
        )
        self._add(line)

    def parsed(self, origin: str, entry: Entry, body: bytes) -> None:
        """The robots.txt body ``entry`` was parsed from (its SHA-256 names it in the lines)."""
        files = self._files
        files[origin] = (entry.fetched_at, sha256_of(body), body)
        files.move_to_end(origin)
        while len(files) > KNOWN_FILES:
            files.popitem(last=False)

    def fetched(self, origin: str, entry: Entry, seconds: float, error: str | None) -> None:
        """The line of one robots.txt fetch, whatever its outcome."""
        body = None
        known = self._files.get(origin)
        if known is not None and known[0] == entry.fetched_at and known[2] is not None:
            body = known[2]
            self._files[origin] = (known[0], known[1], None)  # the body is not kept
        unreachable = entry.outcome is Outcome.UNREACHABLE
        robots = entry.robots if body is not None else None
        licenses = None if robots is None else [lic.url for lic in robots.licenses]
        line = fetch_line(
            origin,
            at=entry.fetched_at,
            outcome=entry.outcome.value,
            elapsed=seconds,
            status=entry.status,
            body=body,
            freshness=entry.fresh_until - entry.fetched_at,
            url=entry.url,
            error=error if unreachable else None,
            policy=self._policy(origin),
            licenses=licenses,
        )
        self._add(line)

    def changed(self, change: Change, agent: str, at: float) -> None:
        """The line of a robots.txt replaced by another file: both SHA-256 values."""
        self._add(change_line(change, at=at, agent=agent))

    async def close(self) -> None:
        """Every line written, then the storage stores the file (uploads it, for remote ones).

        ``audit/lines``: the lines stored; ``audit/lost``: the rest, with one
        ERROR that says why (a full disk, an upload refused), never a traceback.
        """
        writer = self.writer
        try:
            await writer.close()
        finally:
            refused = await self._store()
        stored, lost, error = writer.written, writer.lost, writer.error
        if refused is not None:  # nothing reached the storage
            stored, lost, error = 0, stored + lost, refused
        self.reporter.inc("audit/lines", stored)
        if error is None:
            return
        self.reporter.inc("audit/lost", lost)
        logger.error(
            "The audit trail could not be %(what)s (%(error)s): %(lost)d lines lost"
            " (robotrules/audit/lost)",
            {
                "what": "stored" if refused is not None else "written",
                "error": text_without_credentials(f"{type(error).__name__}: {error}"),
                "lost": lost,
            },
            extra=self.reporter.spider,
        )

    async def _store(self) -> BaseException | None:
        """Hand the file to its storage (which closes or uploads it); why it failed, if it did."""
        try:
            stored = self.storage.store(self.file)
            if isinstance(stored, Deferred):
                await maybe_deferred_to_future(stored)
        except Exception as exc:  # a refused connection, a closed file
            return exc
        return None

    @property
    def shadow(self) -> bool:
        return self.mode == SHADOW
