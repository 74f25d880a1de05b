"""What a request carries in its meta, so that it is decided once (SPEC 7, 8).

The extension decides a request when it is scheduled; the downloader
middleware, its final gate, reuses that decision while the rules it was made
with still hold (:mod:`.deciding.reuse`): :func:`same_rules` is the one test
of "the same rules". The keys below are what passes between them, and
between the parking, politeness and fleet turns that follow: the origin of
the URL is computed once and carried too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy_robotrules.engine.robots.urls import origin_of

if TYPE_CHECKING:
    from scrapy import Request

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
    "carried_in",
    "carry",
    "origin_for",
    "same_rules",
]

DECIDED = "robotrules_decided"
"""Request meta key: what the request was decided for.

The URL it was allowed for (a retry of that URL carries the decision; a
redirect to another URL is decided again, for its own origin and path), or
the exception to raise (``RobotsTxtForbidden``, ``RobotsTxtUnreachable``, or
``PageNofollow`` for a request a callback yielded from a nofollow page: one of
``exceptions.LET_THROUGH``) when dropped but let through to the downloader so
that its errback hears of it (the middleware raises it at once; it was
counted when dropped).
"""
AGAIN = "_robotrules_again"
"""Request meta key: the URL whose allowed decision is to be made again under its origin's
next robots.txt: the rules it was made under went past their age (RFC 9309 2.4), or are no
longer at hand, before it was downloaded. Set by the downloader middleware as the request
leaves the downloader to wait, parked, for them; taken by the scheduler."""
OFFERED = "_robotrules_offered"
"""Request meta key: the URL for which the request was counted as offered."""
PARKED = "_robotrules_parked"
"""Request meta key: the URL for which the request was counted as parked."""
RULES = "_robotrules_rules"
"""Request meta key: the origin and rules of the request's last decision, a :class:`Carried`
kept as a plain tuple (see :func:`carry`)."""

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


class Carried(NamedTuple):
    """What a request carries of its last decision (:data:`RULES`): the rules it was made
    under, and whether they still hold (:func:`same_rules`)."""

    url: str
    """The URL decided: a redirect to another URL is decided again."""
    origin: str
    """The origin of :attr:`url`, computed once (see :func:`origin_for`)."""
    fetched_at: float | None
    """When the robots.txt entry that allowed it was fetched; ``None`` unless allowed."""
    generation: int | None
    """That entry's generation (see :func:`same_rules`); ``None`` unless allowed."""
    tdm_fetched_at: float | None
    """When the tdmrep.json entry it was allowed under was fetched; ``None`` if none was
    asked."""
    agent: str | None
    """The agent it was allowed for (a site policy may have asked about another): the
    downloader paces it for that agent, not chosen again. ``None`` unless allowed."""

    @classmethod
    def undecided(cls, url: str, origin: str) -> Carried:
        """A request not allowed (yet): its origin is carried, no rules to reuse."""
        return cls(url, origin, None, None, None, None)


def carry(meta: dict[str, Any], carried: Carried) -> None:
    """Put ``carried`` in a request's meta (:data:`RULES`), as a plain tuple.

    Scrapy's marshal disk queues (``SCHEDULER_DISK_QUEUE``) serialize only
    plain tuples: a request whose meta held a named one would not be saved in
    ``JOBDIR``. Read it back with :func:`carried_in` (a request an older
    version saved there carries the same tuple).
    """
    meta[RULES] = tuple(carried)


def carried_in(meta: dict[str, Any]) -> Carried | None:
    """What a request's meta carries of its last decision (see :func:`carry`), if anything."""
    carried = meta.get(RULES)
    return None if carried is None else Carried._make(carried)


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
    carried = carried_in(request.meta)
    url = request.url
    if carried is not None and carried.url == url:
        return carried.origin
    return origin_of(url)
