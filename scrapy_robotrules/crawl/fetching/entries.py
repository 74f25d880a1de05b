"""What a robots.txt fetch means for its origin: the entry the rules database keeps (SPEC 8).

The outcome of a status comes from ``engine.robots.fetch_outcomes`` only: rules
(2xx), no robots.txt (other 4xx, too many redirects), a refusal (401/403
with ``ROBOTRULES_UNAUTHORIZED = "disallow"``), or unreachable (429, 5xx,
network errors, a body that cannot be unpacked), which keeps the rules read
earlier and is fetched again with back-off. Freshness follows
``Cache-Control``/``Expires`` within ``ROBOTRULES_MIN_AGE``..``ROBOTRULES_MAX_AGE``.
Each function returns the new entry and moves the origin's outage in step.
A file larger than ``ROBOTRULES_MAX_SIZE`` is decided by its start, as the
command line decides (SPEC 1), counted in ``truncated`` and told once per origin.
With a shared store, each body parsed is also archived by its SHA-256,
the name the audit trail gives it.
"""

from __future__ import annotations

import logging
import zlib
from typing import TYPE_CHECKING

from scrapy_robotrules.crawl.config.settings import MAX_RETRY_DELAY
from scrapy_robotrules.crawl.fetching.bodies import (
    STOPPED_FLAG,
    file_start,
    hidden_encoding,
    response_headers,
)
from scrapy_robotrules.crawl.reporting.log import debug_shown
from scrapy_robotrules.engine.digests import sha256_of
from scrapy_robotrules.engine.robots.fetch_outcomes import (
    Outcome,
    freshness_lifetime,
    outcome_for_status,
    retry_delay,
)
from scrapy_robotrules.engine.robots.robotstxt import RobotsTxt
from scrapy_robotrules.engine.stores import CachedStore

if TYPE_CHECKING:
    from scrapy.http import Response

    from scrapy_robotrules.crawl.config.policy_lookup import SitePolicies
    from scrapy_robotrules.crawl.config.settings import RobotRulesConfig
    from scrapy_robotrules.crawl.fetching.download import Fetched
    from scrapy_robotrules.crawl.fetching.origins import OriginState
    from scrapy_robotrules.crawl.reporting.audit import AuditTrail
    from scrapy_robotrules.crawl.reporting.reporter import Reporter
    from scrapy_robotrules.engine.database import RobotRules
    from scrapy_robotrules.engine.stores import Entry

__all__ = ["FetchRecorder"]

logger = logging.getLogger(__name__)


class FetchRecorder:
    """Records what each robots.txt fetch (here, or another crawler's) means for its origin.

    A download (a response or an error) becomes the entry the rules database
    keeps (:meth:`store`, :meth:`unreachable`); another crawler's entry
    becomes this origin's state (:meth:`adopt`).
    """

    def __init__(
        self,
        db: RobotRules,
        config: RobotRulesConfig,
        reporter: Reporter,
        policies: SitePolicies | None = None,
        audit: AuditTrail | None = None,
    ) -> None:
        self.db = db
        self.config = config
        self.reporter = reporter
        self.audit = audit
        """The audit trail (``ROBOTRULES_AUDIT``), if any: each body parsed."""
        self.policies = policies
        """Per-site policies (site policies): a policy's ``unauthorized`` replaces the project's."""
        self._told_cut: set[str] = set()
        """Origins whose file was told to be cut (once each; forgotten past ``cache_size``)."""

    def store(self, state: OriginState, fetched: Fetched) -> Entry:
        """Record what the fetch means for the origin (:mod:`.fetch_outcomes` decides)."""
        response = fetched.response
        if response is None:
            error = fetched.error
            detail = f"{type(error).__name__}: {error}" if error is not None else "no answer"
            return self.unreachable(state, None, fetched.url, detail)
        status = response.status
        unauthorized = self.config.unauthorized
        policy = self.policies.for_origin(state.name) if self.policies is not None else None
        if policy is not None and policy.unauthorized is not None:
            unauthorized = policy.unauthorized
        outcome = outcome_for_status(status, unauthorized=unauthorized)
        if outcome is Outcome.UNREACHABLE:
            return self.unreachable(state, status, fetched.url, f"HTTP {status}")
        db = self.db
        now = db.clock()
        lifetime = freshness_lifetime(
            response_headers(response),
            max_age=self.config.max_age,
            min_age=self.config.min_age,
            now=now,
        )
        body = response.body
        robots = None
        if outcome is Outcome.RULES:
            codings = hidden_encoding(response)
            stopped = STOPPED_FLAG in response.flags
            try:
                body, cut = file_start(body, codings, db.max_size, stopped=stopped)
            except (zlib.error, ValueError) as exc:
                detail = f"HTTP {status}, a body that cannot be unpacked ({exc})"
                return self.unreachable(state, status, fetched.url, detail)
            robots = RobotsTxt.parse(body, state.robots_url, max_size=db.max_size)
            if robots.truncated or cut:
                self.reporter.inc("truncated")
                self._tell_cut(state.name, _file_size(response, codings, stopped))
            if robots.license_notes:
                self.reporter.inc("usage/licenses_cut")
                logger.info(
                    "robots.txt of %(origin)s: its License lines were cut (%(notes)s)",
                    {"origin": state.name, "notes": "; ".join(robots.license_notes)},
                    extra=self.reporter.spider,
                )
        entry = db.put(
            state.robots_url,
            outcome,
            robots,
            fresh_until=now + lifetime,
            status=status,
            final_url=fetched.url,
            body=body if robots is not None else None,
        )
        if robots is not None:
            self._archive(body)
            if self.audit is not None:
                self.audit.parsed(state.name, entry, body)
        if state.outage is not None:
            logger.info(
                "robots.txt of %(origin)s reachable again after %(seconds).1f s",
                {"origin": state.name, "seconds": now - state.outage.since},
                extra=self.reporter.spider,
            )
        state.settle(entry)
        if debug_shown(logger):
            logger.debug(
                "robots.txt of %(origin)s: %(outcome)s (HTTP %(status)d),"
                " fresh for %(lifetime).0f s",
                {"origin": state.name, "outcome": outcome, "status": status, "lifetime": lifetime},
                extra=self.reporter.spider,
            )
        return entry

    def _tell_cut(self, origin: str, size: int | None) -> None:
        """Say once per origin that its file is read only up to ROBOTRULES_MAX_SIZE."""
        told = self._told_cut
        if origin in told:
            return
        if len(told) >= self.config.cache_size:
            told.clear()
        told.add(origin)
        limit = self.db.max_size
        logger.info(
            "robots.txt of %(origin)s is larger than ROBOTRULES_MAX_SIZE (%(size)s):"
            " only its first part was read",
            {
                "origin": origin,
                "size": f"{size} > {limit} bytes"
                if size is not None
                else f"more than {limit} bytes",
            },
            extra=self.reporter.spider,
        )

    def _archive(self, body: bytes) -> None:
        """A shared store keeps the body by its SHA-256 (counted when the store answered)."""
        store = self.db.store
        if isinstance(store, CachedStore) and store.archive(sha256_of(body), body):
            self.reporter.inc("store/archived")

    def unreachable(self, state: OriginState, status: int | None, url: str, detail: str) -> Entry:
        """Record an unreachable robots.txt: earlier rules kept, next try after the back-off."""
        db = self.db
        now = db.clock()
        previous = db.entry(state.robots_url)
        earlier = previous.robots if previous is not None else None
        failures = (state.outage.failures if state.outage is not None else 0) + 1
        wait = retry_delay(failures, base=self.config.retry_delay, cap=MAX_RETRY_DELAY)
        entry = db.put(
            state.robots_url,
            Outcome.UNREACHABLE,
            earlier,
            fresh_until=now + wait,
            status=status,
            final_url=url,
            sha256=previous.sha256 if earlier is not None and previous is not None else None,
        )
        held = (
            "its earlier rules decide meanwhile"
            if earlier is not None
            else "its requests are parked"
        )
        if state.settle(entry, detail):
            self.reporter.inc("origins/unreachable")
            logger.warning(
                "robots.txt unreachable: %(url)s (%(detail)s); %(held)s, next try in %(wait).1f s",
                {"url": state.robots_url, "detail": detail, "held": held, "wait": wait},
                extra=self.reporter.spider,
            )
        else:
            logger.info(
                "robots.txt still unreachable: %(url)s (%(detail)s, %(failures)d tries);"
                " next try in %(wait).1f s",
                {"url": state.robots_url, "detail": detail, "failures": failures, "wait": wait},
                extra=self.reporter.spider,
            )
        return entry

    def adopt(self, state: OriginState, entry: Entry) -> None:
        """What another crawler fetched becomes this origin's state here."""
        status = f"HTTP {entry.status}" if entry.status is not None else "no answer"
        state.settle(entry, f"{status}, fetched by another crawler")
        self.reporter.set("origins", len(self.db))


def _file_size(response: Response, codings: list[bytes], stopped: bool) -> int | None:
    """The size of a file cut at the limit, when known: as sent whole, or as announced."""
    if codings:
        return None  # unpacked only as far as it is read
    if not stopped:
        return len(response.body)
    length = response.headers.get(b"Content-Length")
    return int(length) if length is not None and length.isdigit() else None
