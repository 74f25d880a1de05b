"""Whether a decision a request carries still holds, and the latest answers by URL (SPEC 7, 8).

A decision is carried (:mod:`..requestmeta`) while the rules it was made
with still hold: same URL, same robots.txt entry (by its generation, see
:func:`..requestmeta.same_rules`; and tdmrep.json entry), still fresh. A
redirect (another URL), a refresh or a new origin's rules make it decided
again.

A spider offers the same URL many times (links every page repeats), and
each offer is decided before the scheduler's duplicate filter drops it:
:class:`AnswerCache` keeps the latest answers of the rules by URL, so that a
URL offered again under the same rules is not matched again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from scrapy_robotrules.crawl.requestmeta import Carried, same_rules

if TYPE_CHECKING:
    from scrapy import Request

    from scrapy_robotrules.crawl.fetching.tdmrep_files import TdmRepFiles
    from scrapy_robotrules.crawl.pacing.politeness import Politeness
    from scrapy_robotrules.engine.database import RobotRules
    from scrapy_robotrules.engine.robots.robotstxt import Decision
    from scrapy_robotrules.engine.stores import Entry

__all__ = ["Answer", "AnswerCache", "Carrier"]


class Answer(NamedTuple):
    """The rules' latest answer for one URL, kept by :class:`AnswerCache`."""

    fetched_at: float
    """When the robots.txt entry that answered was fetched."""
    generation: int
    """That entry's generation (see :func:`..requestmeta.same_rules`)."""
    agent: str
    """The agent asked about: an answer for another is no answer."""
    decision: Decision | None
    """The decision; ``None`` when :attr:`carried` is set: a crawl's every URL would keep
    one alive (an object, its dict, its groups), for the rare offer the scheduler cannot take
    at once, which is decided again."""
    origin: str
    """The origin of the URL."""
    carried: Carried | None
    """What a duplicate offer that may take the answer at once carries (see
    ``Decider.allowed_again``; ``None`` if none may): allowed, for the crawler's own agent,
    with nothing else to ask."""


class AnswerCache:
    """The rules' latest answers by URL, each for one robots.txt entry and agent; bounded.

    An entry is known by its generation (no reference is kept: an evicted
    file's memory goes with it). An answer for another
    entry or agent is no answer.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.by_url: dict[str, Answer] = {}
        """By URL: see :class:`Answer`."""

    def get(self, url: str, entry: Entry, agent: str) -> Decision | None:
        answer = self.by_url.get(url)
        if answer is None:
            return None
        if not same_rules(entry, answer.generation) or answer.agent != agent:
            return None
        return answer.decision

    def put(
        self, url: str, origin: str, entry: Entry, agent: str, decision: Decision, *, again: bool
    ) -> None:
        answers = self.by_url
        fetched_at, generation = entry.fetched_at, entry.generation
        carried = Carried(url, origin, fetched_at, generation, None, agent) if again else None
        kept = None if again else decision
        answers[url] = Answer(fetched_at, generation, agent, kept, origin, carried)
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
        if carried.fetched_at is None:
            return 0.0
        origin = carried.origin
        entry = self.db.store.get(origin)
        if entry is None or not same_rules(entry, carried.generation):
            return 0.0
        now = self.db.clock()
        left = entry.fresh_until - now
        if left <= 0.0:
            return 0.0
        if self.politeness.request_agents and self.politeness.agent(request) != carried.agent:
            return 0.0
        if self.tdmrep is not None:
            tdm = self.tdmrep.entry(origin)
            if tdm is None or tdm.fetched_at != carried.tdm_fetched_at or not tdm.is_fresh(now):
                return 0.0
            left = min(left, tdm.fresh_until - now)
        return left

    def same_entry(self, carried: Carried) -> bool:
        """Whether the origin's robots.txt entry is still the one an allowed decision was made
        under, fresh or not (its next one not yet at hand)."""
        if carried.fetched_at is None:
            return False
        return same_rules(self.db.store.get(carried.origin), carried.generation)
