"""tdmrep.json in a running crawl: fetched once per origin, cached and stored as robots.txt is.

Only a crawl that declares ``tdm`` in ``ROBOTRULES_PURPOSES`` fetches it
(no extra request otherwise). The manager fetches an origin's
``/.well-known/tdmrep.json`` right after its robots.txt, in the same fetch
(same places, same redirects, same engine path), and its requests wait for
both. What a fetch means, per :mod:`.fetch_outcomes` where it fits:

- 2xx: the file's rules (:class:`~.tdmrep.TdmRep`); a broken file (not
  JSON, not an array) has none: no reservation, one WARNING per fetch;
- 3xx past the redirect limit, 4xx (401/403 included): no file, no reservation;
- 429, 5xx, network errors, a body past :data:`MAX_DOWNLOAD`: unreachable.
  Rules read earlier, if any, decide meanwhile; with none, ``tdm`` is
  *unknown* and the request goes on (counted, noted in its view: TDMRep
  makes a reservation something a site states, and a page's own header or
  meta tag may still state it). It is fetched again with robots.txt's
  back-off, when a request for the origin comes after it.

Freshness is robots.txt's (``Cache-Control``/``Expires``, clamped to
``ROBOTRULES_MIN_AGE``..``ROBOTRULES_MAX_AGE``). A shared store keeps one
record per origin under the key ``<origin>/.well-known/tdmrep.json``, beside
the robots.txt records, with the same leases: one crawler of a fleet
fetches it, the others take its record.

SPEC 8's fetch policy, applied to tdmrep.json.
"""

from __future__ import annotations

import logging
import time
import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from scrapy_robotrules.crawl.config.settings import MAX_RETRY_DELAY
from scrapy_robotrules.crawl.exceptions import TDMREP_REFUSAL, FetchClosing
from scrapy_robotrules.crawl.fetching.bodies import decode_body, hidden_encoding, response_headers
from scrapy_robotrules.engine.robots.fetch_outcomes import (
    Outcome,
    freshness_lifetime,
    outcome_for_status,
    retry_delay,
)
from scrapy_robotrules.engine.stores import Record, WeightedLRU
from scrapy_robotrules.engine.usage.preferences import TDM, usage_view
from scrapy_robotrules.engine.usage.tdmrep import MAX_FILE_BYTES, TDMREP_PATH, TdmRep

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robotrules.crawl.config.settings import RobotRulesConfig
    from scrapy_robotrules.crawl.fetching.download import Downloader
    from scrapy_robotrules.crawl.fetching.leases import Leases
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.robots.robotstxt import Decision

__all__ = ["MAX_DOWNLOAD", "STATS", "TDMREP_REFUSAL", "TdmEntry", "TdmRepFiles"]

logger = logging.getLogger(__name__)

MAX_DOWNLOAD = MAX_FILE_BYTES
"""Bytes a tdmrep.json download may reach: a larger one is refused, and counts as unreachable."""
STATS = "usage/tdmrep/"
"""Stats of the tdmrep.json fetches, under ``robotrules/``."""
ENTRY_WEIGHT = 256
"""Estimated bytes of an entry without a file."""


@dataclass(frozen=True)
class TdmEntry:
    """What is known of one origin's tdmrep.json."""

    outcome: Outcome
    """``RULES`` (a file, maybe broken), ``ALLOW_ALL`` (none) or ``UNREACHABLE``."""
    tdm: TdmRep | None
    """The file read; for an unreachable origin the one read before (``None`` if none)."""
    fetched_at: float
    fresh_until: float
    status: int | None = None
    detail: str = ""
    """Why it is unreachable."""
    size: int = 0
    """Bytes of the file read (of the one read before, for an unreachable origin)."""

    def is_fresh(self, now: float) -> bool:
        return now < self.fresh_until

    @property
    def weight(self) -> int:
        """Estimated bytes held: a parsed file takes less than twice its size (measured)."""
        return ENTRY_WEIGHT + 2 * self.size

    @property
    def unknown(self) -> bool:
        """Unreachable with no earlier file: the file's answer is not known."""
        return self.outcome is Outcome.UNREACHABLE and self.tdm is None

    def rep(self) -> TdmRep:
        """What the file says, for :func:`~.usage.usage_view`: its rules, or a note on why none."""
        status = f"HTTP {self.status}" if self.status is not None else "no answer"
        if self.outcome is Outcome.UNREACHABLE:
            if self.tdm is None:
                return TdmRep(
                    note=f"tdmrep.json unreachable ({self.detail or status}): tdm unknown for now"
                )
            return replace(
                self.tdm,
                note=f"tdmrep.json unreachable ({self.detail or status}):"
                " the file read before decides meanwhile",
            )
        if self.outcome is Outcome.RULES and self.tdm is not None:
            return self.tdm
        return TdmRep.missing(status)


class TdmRepFiles:
    """The tdmrep.json of every origin a crawl needs: fetch, cache, store, decide."""

    def __init__(
        self,
        crawler: Crawler,
        *,
        config: RobotRulesConfig,
        clock: Callable[[], float],
        reporter: Reporter,
        download: Downloader,
        leases: Leases | None,
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.clock = clock
        self.reporter = reporter
        self.download = download
        self.leases = leases
        self.fleet = leases.fleet if leases is not None else None
        self.capacity = config.cache_size
        self._entries: WeightedLRU[TdmEntry] = WeightedLRU(
            config.cache_size, max_bytes=config.cache_bytes
        )
        """Like robots.txt entries, parsed files are bounded in weight as well as in count."""
        self._failures: dict[str, int] = {}
        """Failed fetches in a row, per unreachable origin: the back-off."""

    @staticmethod
    def key(origin: str) -> str:
        """The file's URL, which is also its record's key in a shared store."""
        return f"{origin}{TDMREP_PATH}"

    @property
    def weight(self) -> int:
        """The parsed files' total weight, in estimated bytes."""
        return self._entries.weight

    def entry(self, origin: str) -> TdmEntry | None:
        return self._entries.get(origin)

    def due(self, origin: str) -> bool:
        """Whether the file must be fetched (never fetched here, or stale)."""
        entry = self.entry(origin)
        return entry is None or not entry.is_fresh(self.clock())

    def refuse(self, entry: TdmEntry, decision: Decision) -> Decision:
        """``decision``, or a refusal when the file reserves TDM for its URL."""
        if entry.tdm is None or not entry.tdm.rules:
            return decision
        refused = usage_view(decision.url, tdm=entry.tdm).refused((TDM,))
        if not refused:
            return decision
        said = "; ".join(str(p) for p in refused)
        return replace(
            decision, allowed=False, note=f"{TDMREP_REFUSAL}: {said}", refused_by="tdmrep"
        )

    def _inc(self, key: str) -> None:
        self.reporter.inc(f"{STATS}{key}")

    # Fetching: called by the manager's fetch of the origin, after robots.txt.

    async def fetch(self, origin: str, trigger: Request) -> None:
        """Fetch the origin's file, or take the record another crawler (or crawl) stored."""
        leases = self.leases
        if leases is None:
            await self._fetch_and_store(origin, trigger)
            return
        key = self.key(origin)

        def stored() -> bool | None:
            return self._adopt(origin, leases.fleet.load_record(key)) or None

        if await leases.take_or_wait(key, stored):
            self._inc("stored")
            return
        with leases.held(key):
            await self._fetch_and_store(origin, trigger)

    def _adopt(self, origin: str, record: Record | None) -> bool:
        """A fresh record newer than what is held becomes the origin's entry here."""
        now = self.clock()
        if record is None or record.fresh_until <= now:
            return False
        held = self._entries.peek(origin)
        if held is not None and held.fetched_at >= record.fetched_at:
            return held.is_fresh(now)
        tdm = None
        if record.body is not None and record.outcome in (Outcome.RULES, Outcome.UNREACHABLE):
            tdm = TdmRep.parse(record.body)
        elif record.outcome is Outcome.RULES:
            return False  # a file without its body: fetched again
        outcome = Outcome.ALLOW_ALL if record.outcome is Outcome.DISALLOW_ALL else record.outcome
        detail = f"HTTP {record.status}, fetched by another crawler" if record.status else ""
        self._entries.keep(
            origin,
            TdmEntry(
                outcome,
                tdm,
                record.fetched_at,
                record.fresh_until,
                record.status,
                detail,
                size=len(record.body or b""),
            ),
        )
        return True

    async def _fetch_and_store(self, origin: str, trigger: Request) -> None:
        url = self.key(origin)
        started = time.monotonic()
        try:
            fetched = await self.download.download(url, trigger, prefix=STATS, maxsize=MAX_DOWNLOAD)
            response = fetched.response
            if response is None:
                error = fetched.error
                detail = f"{type(error).__name__}: {error}" if error is not None else "no answer"
                self._unreachable(origin, None, detail)
            else:
                self._store(origin, response.status, response, fetched.url)
        except FetchClosing:
            raise
        except Exception as exc:  # a bug, not the network: unknown, never "no reservation"
            logger.error(
                "Error fetching %(url)s", {"url": url}, exc_info=True, extra=self._spider()
            )
            self._unreachable(origin, None, f"{type(exc).__name__}: {exc}")
        self._inc("fetches")
        logger.debug(
            "tdmrep.json of %(origin)s fetched in %(seconds).2f s",
            {"origin": origin, "seconds": time.monotonic() - started},
            extra=self._spider(),
        )

    def _spider(self) -> dict[str, object]:
        return {"spider": self.crawler.spider}

    def _store(self, origin: str, status: int, response: Response, url: str) -> None:
        config = self.config
        outcome = outcome_for_status(status)  # 401/403 too: no file, no reservation
        if outcome is Outcome.UNREACHABLE:
            self._unreachable(origin, status, f"HTTP {status}")
            return
        now = self.clock()
        lifetime = freshness_lifetime(
            response_headers(response), max_age=config.max_age, min_age=config.min_age, now=now
        )
        body: bytes | None = None
        tdm = None
        if outcome is Outcome.RULES:
            body = response.body
            codings = hidden_encoding(response)
            if codings:
                try:
                    body = decode_body(body, codings, MAX_FILE_BYTES + 1)
                except (zlib.error, ValueError) as exc:
                    self._unreachable(origin, status, f"HTTP {status}, cannot be unpacked ({exc})")
                    return
            tdm = TdmRep.parse(body)
            if tdm.note.startswith("tdmrep.json broken"):
                self._inc("broken")
                logger.warning(
                    "%(note)s at %(url)s: no reservation from it (tdm unknown)",
                    {"note": tdm.note, "url": self.key(origin)},
                    extra=self._spider(),
                )
        self._failures.pop(origin, None)
        self._save(
            origin,
            TdmEntry(outcome, tdm, now, now + lifetime, status, size=len(body or b"")),
            Record(self.key(origin), outcome, body, status, url, now, now + lifetime),
        )
        logger.debug(
            "tdmrep.json of %(origin)s: %(outcome)s (HTTP %(status)d), fresh for %(lifetime).0f s",
            {"origin": origin, "outcome": outcome, "status": status, "lifetime": lifetime},
            extra=self._spider(),
        )

    def _unreachable(self, origin: str, status: int | None, detail: str) -> None:
        now = self.clock()
        failures = self._failures[origin] = self._failures.get(origin, 0) + 1
        if len(self._failures) > self.capacity:
            del self._failures[next(iter(self._failures))]
        wait = retry_delay(failures, base=self.config.retry_delay, cap=MAX_RETRY_DELAY)
        held = self._entries.peek(origin)
        earlier = held.tdm if held is not None else None
        size = held.size if held is not None else 0
        body = None
        fleet = self.fleet
        if fleet is not None and earlier is not None:
            previous = fleet.load_record(self.key(origin))
            if previous is not None and previous.outcome in (Outcome.RULES, Outcome.UNREACHABLE):
                body = previous.body
        self._save(
            origin,
            TdmEntry(Outcome.UNREACHABLE, earlier, now, now + wait, status, detail, size=size),
            Record(self.key(origin), Outcome.UNREACHABLE, body, status, None, now, now + wait),
        )
        if failures == 1:
            self._inc("unreachable")
        log = logger.warning if failures == 1 else logger.info
        log(
            "tdmrep.json unreachable: %(url)s (%(detail)s, %(failures)d tries);"
            " tdm is %(meanwhile)s, next try in %(wait).1f s",
            {
                "url": self.key(origin),
                "detail": detail,
                "failures": failures,
                "meanwhile": "decided by the file read before" if earlier else "unknown meanwhile",
                "wait": wait,
            },
            extra=self._spider(),
        )

    def _save(self, origin: str, entry: TdmEntry, record: Record) -> None:
        self._entries.keep(origin, entry)
        if self.fleet is not None:
            self.fleet.save_record(record)
