"""The ``ROBOTRULES_*`` settings: their defaults, and one validated view of them per crawler.

Every setting is read and checked once, when the crawl starts, so a bad
value stops the crawl before any request with one message that names the
setting and what it accepts. Durations are seconds; floats are accepted, and
so are strings such as ``-s ROBOTRULES_RETRY_DELAY=2.5`` on the command line.

The crawler's name in robots.txt (its product token, SPEC 3) comes from the
first of: the spider's ``robotrules_user_agent`` attribute,
``ROBOTRULES_USER_AGENT``, ``ROBOTSTXT_USER_AGENT``, the spider's
``user_agent`` attribute, ``USER_AGENT``. When none of the first three is
set, a request's own ``User-Agent`` header comes before the last two, as in
Scrapy's ``RobotsTxtMiddleware`` (see :func:`named_for_robots`). The spider's
``robotrules_precedence`` attribute likewise overrides
``ROBOTRULES_PRECEDENCE``.

Each value is read by :mod:`.setting_values`, which also holds every
number's range (``LIMITS``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..engine.agents import AGENT_MATCH_STYLES, TOKEN, product_token
from ..engine.fetch_policy import DEFAULT_MAX_AGE, DEFAULT_MIN_AGE, UNAUTHORIZED_CHOICES
from ..engine.index.automata import DEFAULT_AUTOMATON_BYTES
from ..engine.page.html import DEFAULT_LIMIT as DEFAULT_PAGE_MAX_HTML
from ..engine.precedence import MOST_SPECIFIC, PRECEDENCE_MODES
from ..engine.reading import DEFAULT_MAX_SIZE
from ..engine.stores import DEFAULT_CACHE_BYTES
from .setting_values import (
    LIMITS,
    MAX_RETRY_DELAY,
    USAGE_PURPOSES,
    RobotRulesSettingError,
    as_boolean,
    as_choice,
    as_field_name,
    as_integer,
    as_purposes,
    as_seconds,
    as_store,
    invalid,
)

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

__all__ = [
    "DEFAULTS",
    "LIMITS",
    "MAX_RETRY_DELAY",
    "USAGE_PURPOSES",
    "RobotRulesConfig",
    "RobotRulesSettingError",
    "crawl_config",
    "named_for_robots",
]

logger = logging.getLogger(__name__)

DEFAULTS: dict[str, Any] = {
    "ROBOTRULES_PRECEDENCE": MOST_SPECIFIC,
    "ROBOTRULES_AGENT_MATCH": TOKEN,
    "ROBOTRULES_USER_AGENT": None,
    "ROBOTRULES_MAX_SIZE": DEFAULT_MAX_SIZE,
    "ROBOTRULES_UNAUTHORIZED": "allow",
    "ROBOTRULES_RETRY_DELAY": 5.0,
    "ROBOTRULES_UNREACHABLE_TIMEOUT": 300.0,
    "ROBOTRULES_MAX_AGE": DEFAULT_MAX_AGE,
    "ROBOTRULES_MIN_AGE": DEFAULT_MIN_AGE,
    "ROBOTRULES_CACHE_SIZE": 100_000,
    "ROBOTRULES_CACHE_BYTES": DEFAULT_CACHE_BYTES,
    "ROBOTRULES_AUTOMATON_BYTES": DEFAULT_AUTOMATON_BYTES,
    "ROBOTRULES_CRAWL_DELAY": True,
    "ROBOTRULES_MAX_CRAWL_DELAY": 60.0,
    "ROBOTRULES_MAX_WAITING_PER_ORIGIN": 1000,
    "ROBOTRULES_CONCURRENT_FETCHES": 64,
    "ROBOTRULES_STORE": "memory",
    "ROBOTRULES_LEASE": 10.0,
    # Page-level directives (pagemiddleware.py).
    "ROBOTRULES_PAGE_NOFOLLOW": True,
    "ROBOTRULES_PAGE_NOFOLLOW_LINKS": False,
    "ROBOTRULES_PAGE_NOINDEX": "mark",
    "ROBOTRULES_PAGE_NOINDEX_FIELD": "robotrules_noindex",
    "ROBOTRULES_PAGE_MAX_HTML": DEFAULT_PAGE_MAX_HTML,
    # Usage preferences (usagemiddleware.py).
    "ROBOTRULES_PURPOSES": [],
    "ROBOTRULES_USAGE_ITEMS": "mark",
    "ROBOTRULES_USAGE_FIELD": "robotrules_usage_refused",
}
"""Every setting this package reads, with its default."""

PAGE_NOINDEX_CHOICES = ("mark", "drop", "ignore")
"""What ``ROBOTRULES_PAGE_NOINDEX`` does with items of a noindex page."""


@dataclass(frozen=True)
class RobotRulesConfig:
    """The settings of one crawl, checked. Build it with :meth:`from_crawler`."""

    user_agent: str
    """The agent string robots.txt groups are matched against (by its product token)."""
    precedence: str = MOST_SPECIFIC
    agent_match: str = TOKEN
    max_size: int = DEFAULT_MAX_SIZE
    unauthorized: str = "allow"
    retry_delay: float = 5.0
    unreachable_timeout: float = 300.0
    max_age: float = DEFAULT_MAX_AGE
    min_age: float = DEFAULT_MIN_AGE
    cache_size: int = 100_000
    cache_bytes: int = DEFAULT_CACHE_BYTES
    """Estimated bytes the rules cache may hold; least recently used origins go first."""
    automaton_bytes: int = DEFAULT_AUTOMATON_BYTES
    """Estimated bytes of compiled automata the whole process holds (large wildcard sets)."""
    crawl_delay: bool = True
    max_crawl_delay: float = 60.0
    max_waiting_per_origin: int = 1000
    concurrent_fetches: int = 64
    """robots.txt downloads started at once (one running over 5 s frees its place)."""
    store: str = "memory"
    """``memory``, ``sqlite:///absolute/path.db``, ``sqlite:relative.db`` or ``redis://...``."""
    lease: float = 10.0
    """Seconds a crashed crawler's robots.txt fetch lease outlives it (shared stores)."""
    page_nofollow: bool = True
    """Drop the requests a callback yields from a ``nofollow`` response."""
    page_nofollow_links: bool = False
    """Drop the requests a callback yields to the response's ``rel="nofollow"`` links."""
    page_noindex: str = "mark"
    """Items yielded from a ``noindex`` (or expired) response: ``mark``, ``drop`` or ``ignore``."""
    page_noindex_field: str = "robotrules_noindex"
    page_max_html: int = DEFAULT_PAGE_MAX_HTML
    """Bytes of an HTML response read for its robots meta tags."""
    purposes: tuple[str, ...] = ()
    """What the crawl's content is for; a URL whose preferences refuse one is not used."""
    usage_items: str = "mark"
    """Items of a response whose preferences refuse a purpose: ``mark``, ``drop``, ``ignore``."""
    usage_field: str = "robotrules_usage_refused"

    @property
    def product_token(self) -> str:
        """The crawler's name as robots.txt groups are matched: ``mybot``."""
        return product_token(self.user_agent)

    @classmethod
    def from_settings(
        cls, settings: BaseSettings, spider: Spider | None = None, *, agent: bool = True
    ) -> RobotRulesConfig:
        """Read and check every setting; ``spider`` attributes override the project's.

        ``agent=False`` leaves the user agent unchecked (``*``): before a
        spider is known, its attributes may still provide one.
        """

        def get(name: str) -> Any:
            return settings.get(name, DEFAULTS[name])

        precedence = as_choice(
            "ROBOTRULES_PRECEDENCE", get("ROBOTRULES_PRECEDENCE"), PRECEDENCE_MODES
        )
        attribute = getattr(spider, "robotrules_precedence", None)
        if attribute is not None:
            precedence = as_choice(
                _attribute_name(spider, "robotrules_precedence"), attribute, PRECEDENCE_MODES
            )
        return cls(
            user_agent=_user_agent(settings, spider) if agent else "*",
            precedence=precedence,
            agent_match=as_choice(
                "ROBOTRULES_AGENT_MATCH", get("ROBOTRULES_AGENT_MATCH"), AGENT_MATCH_STYLES
            ),
            max_size=as_integer("ROBOTRULES_MAX_SIZE", get("ROBOTRULES_MAX_SIZE"), minimum=1),
            unauthorized=as_choice(
                "ROBOTRULES_UNAUTHORIZED", get("ROBOTRULES_UNAUTHORIZED"), UNAUTHORIZED_CHOICES
            ),
            retry_delay=as_seconds(
                "ROBOTRULES_RETRY_DELAY", get("ROBOTRULES_RETRY_DELAY"), zero=False
            ),
            unreachable_timeout=as_seconds(
                "ROBOTRULES_UNREACHABLE_TIMEOUT", get("ROBOTRULES_UNREACHABLE_TIMEOUT")
            ),
            max_age=as_seconds("ROBOTRULES_MAX_AGE", get("ROBOTRULES_MAX_AGE"), zero=False),
            min_age=as_seconds("ROBOTRULES_MIN_AGE", get("ROBOTRULES_MIN_AGE")),
            cache_size=as_integer("ROBOTRULES_CACHE_SIZE", get("ROBOTRULES_CACHE_SIZE"), minimum=1),
            cache_bytes=as_integer(
                "ROBOTRULES_CACHE_BYTES", get("ROBOTRULES_CACHE_BYTES"), minimum=1
            ),
            automaton_bytes=as_integer(
                "ROBOTRULES_AUTOMATON_BYTES", get("ROBOTRULES_AUTOMATON_BYTES"), minimum=0
            ),
            crawl_delay=as_boolean("ROBOTRULES_CRAWL_DELAY", get("ROBOTRULES_CRAWL_DELAY")),
            max_crawl_delay=as_seconds(
                "ROBOTRULES_MAX_CRAWL_DELAY", get("ROBOTRULES_MAX_CRAWL_DELAY")
            ),
            max_waiting_per_origin=as_integer(
                "ROBOTRULES_MAX_WAITING_PER_ORIGIN",
                get("ROBOTRULES_MAX_WAITING_PER_ORIGIN"),
                minimum=0,
            ),
            concurrent_fetches=as_integer(
                "ROBOTRULES_CONCURRENT_FETCHES", get("ROBOTRULES_CONCURRENT_FETCHES"), minimum=1
            ),
            store=as_store(get("ROBOTRULES_STORE")),
            lease=as_seconds("ROBOTRULES_LEASE", get("ROBOTRULES_LEASE"), zero=False),
            page_nofollow=as_boolean("ROBOTRULES_PAGE_NOFOLLOW", get("ROBOTRULES_PAGE_NOFOLLOW")),
            page_nofollow_links=as_boolean(
                "ROBOTRULES_PAGE_NOFOLLOW_LINKS", get("ROBOTRULES_PAGE_NOFOLLOW_LINKS")
            ),
            page_noindex=as_choice(
                "ROBOTRULES_PAGE_NOINDEX", get("ROBOTRULES_PAGE_NOINDEX"), PAGE_NOINDEX_CHOICES
            ),
            page_noindex_field=as_field_name(
                "ROBOTRULES_PAGE_NOINDEX_FIELD", get("ROBOTRULES_PAGE_NOINDEX_FIELD")
            ),
            page_max_html=as_integer(
                "ROBOTRULES_PAGE_MAX_HTML", get("ROBOTRULES_PAGE_MAX_HTML"), minimum=1
            ),
            purposes=as_purposes(get("ROBOTRULES_PURPOSES")),
            usage_items=as_choice(
                "ROBOTRULES_USAGE_ITEMS", get("ROBOTRULES_USAGE_ITEMS"), PAGE_NOINDEX_CHOICES
            ),
            usage_field=as_field_name("ROBOTRULES_USAGE_FIELD", get("ROBOTRULES_USAGE_FIELD")),
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler, spider: Spider | None = None) -> RobotRulesConfig:
        """The config of ``crawler``, with ``spider`` (by default the crawler's) applied."""
        return cls.from_settings(crawler.settings, spider if spider is not None else crawler.spider)


def _attribute_name(spider: object, attribute: str) -> str:
    name = getattr(spider, "name", None) or type(spider).__name__
    return f"{attribute} (attribute of spider {name!r})"


def named_for_robots(settings: BaseSettings, spider: Spider | None) -> bool:
    """Whether an agent is named for robots.txt itself, not only for the requests.

    That is the spider's ``robotrules_user_agent``, ``ROBOTRULES_USER_AGENT``
    or ``ROBOTSTXT_USER_AGENT``. Without one, the agent a request sends (its
    own ``User-Agent`` header, else the spider's or ``USER_AGENT``) is the
    one robots.txt is asked about, as Scrapy's ``RobotsTxtMiddleware`` does.
    """
    named = (
        getattr(spider, "robotrules_user_agent", None),
        settings.get("ROBOTRULES_USER_AGENT"),
        settings.get("ROBOTSTXT_USER_AGENT"),
    )
    return any(value not in (None, "", b"") for value in named)


def _user_agent(settings: BaseSettings, spider: Spider | None) -> str:
    """The first agent given: spider attribute, then the settings' fallback chain."""
    candidates: list[tuple[str, object]] = []
    if spider is not None:
        candidates.append(
            (
                _attribute_name(spider, "robotrules_user_agent"),
                getattr(spider, "robotrules_user_agent", None),
            )
        )
    candidates += [
        ("ROBOTRULES_USER_AGENT", settings.get("ROBOTRULES_USER_AGENT")),
        ("ROBOTSTXT_USER_AGENT", settings.get("ROBOTSTXT_USER_AGENT")),
    ]
    if spider is not None:
        candidates.append(
            (_attribute_name(spider, "user_agent"), getattr(spider, "user_agent", None))
        )
    candidates.append(("USER_AGENT", settings.get("USER_AGENT")))
    for name, value in candidates:
        if value is None or value in ("", b""):
            continue
        agent = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if not isinstance(agent, str) or not product_token(agent):
            raise invalid(name, "a user agent string that starts with a product token", value)
        return agent
    names = ", ".join(name for name, _ in candidates)
    raise RobotRulesSettingError(
        f"no user agent to match robots.txt groups with: set one of {names}"
    )


def crawl_config(crawler: Crawler) -> RobotRulesConfig:
    """The config of a crawl about to start: a bad setting stops it, with one ERROR line.

    The :class:`RobotRulesSettingError` still propagates, so that the crawl
    fails (``scrapy crawl`` exits with status 1, ``CrawlerRunner.crawl``
    fails with it). Running as an asyncio task (``scrapy crawl``,
    ``AsyncCrawlerProcess``), the task's exception is marked as seen, since
    the ERROR line said it all: asyncio would print a 40-line traceback for
    a typo in a setting. Scrapy's Deferred-based ``CrawlerProcess`` still
    reports it as an unhandled error; its last line is this message.
    """
    try:
        return RobotRulesConfig.from_crawler(crawler)
    except RobotRulesSettingError as error:
        logger.error("%(error)s: the crawl cannot start", {"error": error})
        _mark_seen(error)
        raise


def _mark_seen(error: BaseException) -> None:
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running event loop
        return
    if task is None:
        return

    def seen(task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            return
        failed = task.exception()  # marks it retrieved
        if failed is not None and failed is not error:
            # Another failure: asyncio must report it as it would have.
            task.get_loop().call_exception_handler(
                {
                    "message": "Task exception was never retrieved",
                    "exception": failed,
                    "future": task,
                }
            )

    task.add_done_callback(seen)
