"""Why robots.txt handling drops a request, as exceptions a spider's errback receives.

And why the page directives drop one a callback yielded (:class:`PageNofollow`).

All are Scrapy's ``IgnoreRequest``, so a request dropped here is
handled like one Scrapy's own middleware drops. They pickle (a JOBDIR crawl
saves them in request meta). SPEC 8: a forbidden request, one whose origin
stayed unreachable too long, one the crawl closed on before its robots.txt
was fetched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from scrapy.exceptions import IgnoreRequest

from scrapy_robotrules.engine.usage.preferences import USAGE_REFUSAL

if TYPE_CHECKING:
    from scrapy_robotrules.engine.robots.decision import Decision

__all__ = [
    "LET_THROUGH",
    "TDMREP_REFUSAL",
    "DropReason",
    "FetchClosing",
    "PageNofollow",
    "RobotsTxtForbidden",
    "RobotsTxtNotFetched",
    "RobotsTxtPinMismatch",
    "RobotsTxtUnreachable",
]

TDMREP_REFUSAL = f"{USAGE_REFUSAL} tdm by tdmrep.json"
"""How a decision's note begins when tdmrep.json reserves TDM for its URL."""


_FORBIDDEN_STATS = {
    "robots": ("forbidden",),
    "usage": ("forbidden", "usage/forbidden"),
    "tdmrep": ("forbidden", "usage/forbidden", "usage/tdmrep/forbidden"),
}
"""The ``robotrules/`` stats a forbidden request counts, by what forbade it."""


class RobotsTxtForbidden(IgnoreRequest):
    """A request dropped because its origin's robots.txt disallows it; ``reason`` says by what.

    ``kind``: ``"robots"`` (its rules), ``"usage"`` (a usage preference of
    robots.txt refuses a declared purpose) or ``"tdmrep"`` (tdmrep.json
    reserves text and data mining).
    """

    def __init__(self, reason: str, kind: str = "robots") -> None:
        self.reason = reason
        self.kind = kind
        self.stats: tuple[str, ...] = _FORBIDDEN_STATS[kind]
        """The ``robotrules/`` stats it counts."""
        self.builtin = kind == "robots"
        """Whether Scrapy's own ``robotstxt/forbidden`` counts it (robots.txt's rules forbade)."""
        self.denies_start = kind != "tdmrep"
        """Whether a start request it drops is one robots.txt denied (``robotstxt_denied``)."""
        super().__init__(f"Forbidden by robots.txt: {reason}")

    @classmethod
    def of(cls, decision: Decision) -> RobotsTxtForbidden:
        """Why ``decision`` (a disallowing one) drops its request."""
        return cls(decision.reason, decision.refused_by or "robots")

    def __reduce__(self) -> tuple[type[RobotsTxtForbidden], tuple[str, str]]:
        # Kept in request meta, which JOBDIR crawls pickle.
        return type(self), (self.reason, self.kind)


class RobotsTxtUnreachable(IgnoreRequest):
    """A request dropped because its origin's robots.txt stayed unreachable too long."""

    kind: ClassVar[str] = "unreachable"
    stats: ClassVar[tuple[str, ...]] = ("unreachable",)
    """The ``robotrules/`` stats it counts."""

    def __init__(self, origin: str, seconds: float, error: str) -> None:
        self.origin = origin
        self.seconds = seconds
        self.error = error
        super().__init__(
            f"robots.txt unreachable: {origin}/robots.txt has failed"
            f" for {seconds:.1f} s (last: {error})"
        )

    def __reduce__(self) -> tuple[type[RobotsTxtUnreachable], tuple[str, float, str]]:
        # Kept in request meta, which JOBDIR crawls pickle.
        return type(self), (self.origin, self.seconds, self.error)


class RobotsTxtPinMismatch(RobotsTxtUnreachable):
    """A request dropped because its origin's robots.txt stayed other than its pinned file.

    Held as an unreachable origin's are (``ROBOTRULES_PINNED``): ``error``
    names both SHA-256 values.
    """

    kind: ClassVar[str] = "pin"
    stats: ClassVar[tuple[str, ...]] = ("unreachable", "pinned/dropped")

    def __init__(self, origin: str, seconds: float, error: str) -> None:
        super().__init__(origin, seconds, error)
        IgnoreRequest.__init__(self, f"{error}: parked {seconds:.1f} s for {origin}/robots.txt")


class RobotsTxtNotFetched(IgnoreRequest):
    """A request dropped because the crawl closed before its origin's robots.txt was fetched."""

    kind: ClassVar[str] = "lost"
    stats: ClassVar[tuple[str, ...]] = ("lost_at_close",)
    """The ``robotrules/`` stats it counts."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        super().__init__(f"the crawl closed before {origin}/robots.txt was fetched")

    def __reduce__(self) -> tuple[type[RobotsTxtNotFetched], tuple[str]]:
        return type(self), (self.origin,)


DropReason = RobotsTxtForbidden | RobotsTxtUnreachable | RobotsTxtNotFetched
"""Why robots.txt handling dropped a request."""


class PageNofollow(IgnoreRequest):
    """A request a callback yielded from a page that says ``nofollow`` (or links it so).

    ``why``: ``"nofollow"`` (the page's rules) or ``"nofollow_link"`` (its
    ``rel="nofollow"`` link), the ``robotrules/page/requests/`` stat it counts.
    Not a robots.txt drop: counted there only, outside the offered requests.
    """

    def __init__(self, why: str, reason: str, page: str) -> None:
        self.why = why
        self.reason = reason
        self.page = page
        super().__init__(f"Dropped for {why.replace('_', ' ')}: {reason} ({page})")

    def __reduce__(self) -> tuple[type[PageNofollow], tuple[str, str, str]]:
        # Kept in request meta, which JOBDIR crawls pickle.
        return type(self), (self.why, self.reason, self.page)


LET_THROUGH = (RobotsTxtForbidden, RobotsTxtUnreachable, PageNofollow)
"""What a dropped request carries in ``DECIDED`` when let through for its errback: the
downloader middleware raises it at once."""


class FetchClosing(Exception):
    """A robots.txt (or tdmrep.json) fetch not started because the crawl is closing."""
