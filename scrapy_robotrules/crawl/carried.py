"""What a request carries in its meta, so that it is decided once (SPEC 7, 8).

The extension decides a request when it is scheduled; the downloader
middleware, its final gate, reuses that decision while the rules it was made
with still hold: same URL, same robots.txt entry (and tdmrep.json entry),
still fresh. A redirect (another URL), a refresh or a new origin's rules make
it decided again. The origin of the URL is computed once and carried too, for
the parking, politeness and fleet turns that follow.

A spider offers the same URL many times (links every page repeats), and
each offer is decided before the scheduler's duplicate filter drops it:
:class:`Decisions` keeps the latest answers of the rules by URL, so that a
URL offered again under the same rules is not matched again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robotrules.crawl import compat
from scrapy_robotrules.engine.urls import origin_of

if TYPE_CHECKING:
    from scrapy import Request

    from scrapy_robotrules.crawl.politeness import Politeness
    from scrapy_robotrules.crawl.tdmrepfetch import TdmRepFiles
    from scrapy_robotrules.engine.database import RobotRules
    from scrapy_robotrules.engine.robotstxt import Decision
    from scrapy_robotrules.engine.stores import Entry

__all__ = [
    "AGAIN",
    "DECIDED",
    "OFFERED",
    "PARKED",
    "RULES",
    "SENT_BACK",
    "STALE",
    "Carried",
    "Carrier",
    "Decisions",
    "origin_for",
    "same_rules",
]

DECIDED = "robotrules_decided"
"""Request meta key: what the request was decided for.

The URL it was allowed for (a retry of that URL carries the decision; a
redirect to another URL is decided again, for its own origin and path), or
the exception to raise (``RobotsTxtForbidden`` or ``RobotsTxtUnreachable``)
when dropped but let through to the downloader so that its errback hears of
it (the middleware raises it at once; it was counted when decided).
"""
AGAIN = "_robotrules_again"
"""Request meta key: the URL whose allowed decision is to be made again under its origin's
next robots.txt: the rules it was made under went past their age (RFC 9309 2.4), or are no
longer at hand, before it was downloaded. Set by the downloader middleware as the request
leaves the downloader to wait, parked, for them; taken by the gate."""
OFFERED = "_robotrules_offered"
"""Request meta key: the URL for which the request was counted as offered."""
PARKED = "_robotrules_parked"
"""Request meta key: the URL for which the request was counted as parked."""
RULES = "_robotrules_rules"
"""Request meta key: a :data:`Carried` tuple, the origin and rules of its last decision."""

STALE = "_robotrules_stale"
"""Request meta key: the URL decided by its origin's rules when they were already past their
age, while they were fetched again (SPEC 8: a refresh never stalls the crawl). The downloader
lets it go on under them; one decided under fresh rules that went past their age before it
reached the downloader waits for the next file instead (:data:`AGAIN`)."""

SENT_BACK = "_robotrules_sent_back"
"""Request meta key: the URL sent back from the downloader (:data:`AGAIN`) because its rules
would be past their age before it left its download slot's queue (:mod:`.slotwait`). Once
only: decided under the next file, it goes on under it, however long it then waits there
(no file is fresh for longer than its age, a wait in the queue may be longer)."""

Carried = tuple[str, str, float | None, int | None, float | None, str | None]
"""URL, its origin, then (``None`` unless its rules allowed it): when its robots.txt entry
was fetched and that entry's generation (see :func:`same_rules`), when its tdmrep.json
entry was fetched (``None`` if none was asked), and the request's agent (a site policy
may have asked about another): the downloader paces it for that agent, not chosen again."""

Answer = tuple[float, int, str, "Decision | None", str, "Carried | None"]
"""When its robots.txt entry was fetched, that entry's generation, the agent asked about, the
decision, the origin, and what a duplicate offer that may take it at once carries (see
``gate.py``; ``None`` if none may): allowed, for the crawler's own agent, with nothing else
to ask. Such an answer keeps no decision: a crawl's every URL would keep one alive (an
object, its dict, its groups), for the rare offer the gate cannot take at once, which
is decided again."""


def same_rules(entry: Entry | None, generation: int | None) -> bool:
    """Whether ``entry`` is the very robots.txt entry a decision carrying ``generation`` was
    made under: the one test of "the same rules" for carried decisions and kept answers.

    An entry's generation is never given to another entry, not even one of a later
    process, so a decision never holds for a file it was not made under.
    """
    return entry is not None and entry.generation == generation


def origin_for(request: Request) -> str:
    """The origin of ``request``: carried if it was decided for this URL, else computed.

    Raises ``ValueError`` for a URL without one, as :func:`origin_of` does.
    """
    meta = compat.request_meta(request)
    carried: Carried | None = None if meta is None else meta.get(RULES)
    url = compat.request_url(request)
    if carried is not None and carried[0] == url:
        return carried[1]
    return origin_of(url)


class Decisions:
    """The rules' latest answers by URL, each for one robots.txt entry and agent; bounded.

    An entry is known by its generation (no reference is kept: an evicted
    file's memory goes with it). An answer for another
    entry or agent is no answer.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.by_url: dict[str, Answer] = {}
        """By URL: see :data:`Answer`."""

    def get(self, url: str, entry: Entry, agent: str) -> Decision | None:
        answer = self.by_url.get(url)
        if answer is None:
            return None
        _, generation, asked, decision, _, _ = answer
        if not same_rules(entry, generation) or asked != agent:
            return None
        return decision

    def put(
        self, url: str, origin: str, entry: Entry, agent: str, decision: Decision, *, again: bool
    ) -> None:
        answers = self.by_url
        fetched_at, generation = entry.fetched_at, entry.generation
        carried = (url, origin, fetched_at, generation, None, agent) if again else None
        kept = None if again else decision
        answers[url] = (fetched_at, generation, agent, kept, origin, carried)
        if len(answers) > self.size:
            del answers[next(iter(answers))]


class Carrier:
    """Whether the rules a carried decision was made under still hold."""

    def __init__(self, db: RobotRules, politeness: Politeness, tdmrep: TdmRepFiles | None) -> None:
        self.db = db
        self.politeness = politeness
        self.tdmrep = tdmrep

    def fresh_for(self, carried: Carried, request: Request) -> float:
        """Seconds the decision holds: same robots.txt (and tdmrep.json) entries, still fresh
        (that long), and the same agent. ``0.0`` when it does not hold.

        Deciding again meanwhile would give the same answer and start no fetch.
        """
        _, origin, fetched_at, generation, tdm_at, agent = carried
        if fetched_at is None:
            return 0.0
        entry = self.db.store.get(origin)
        if entry is None or not same_rules(entry, generation):
            return 0.0
        now = self.db.clock()
        left = entry.fresh_until - now
        if left <= 0.0:
            return 0.0
        if self.politeness.request_agents and self.politeness.agent(request) != agent:
            return 0.0
        if self.tdmrep is not None:
            tdm = self.tdmrep.entry(origin)
            if tdm is None or tdm.fetched_at != tdm_at or not tdm.is_fresh(now):
                return 0.0
            left = min(left, tdm.fresh_until - now)
        return left

    def same_entry(self, carried: Carried) -> bool:
        """Whether the origin's robots.txt entry is still the one an allowed decision was made
        under, fresh or not (its next one not yet at hand)."""
        _, origin, fetched_at, generation, _, _ = carried
        if fetched_at is None:
            return False
        return same_rules(self.db.store.get(origin), generation)
