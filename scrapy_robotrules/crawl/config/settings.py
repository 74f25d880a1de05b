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
``ROBOTRULES_PRECEDENCE``; either setting given with ``-s`` (above the
spider's priority) beats the attribute, as Scrapy's order has it.

Each value is read through :mod:`.config.table`, the table of every
setting the package reads (with every number's range, ``LIMITS``);
:func:`crawl_config` checks them all, and the spider's attributes, as a
crawl starts.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import ScrapyDeprecationWarning

from scrapy_robotrules.crawl.config.table import (
    LIMITS,
    PAGE_NOINDEX_CHOICES,
    TABLE,
    attribute_name,
    check,
    defined,
    deprecated,
    spider_value,
    unknown,
    value,
)
from scrapy_robotrules.crawl.config.values import (
    MAX_RETRY_DELAY,
    USAGE_PURPOSES,
    RobotRulesSettingError,
    as_agent,
)
from scrapy_robotrules.engine.page.html import DEFAULT_LIMIT as DEFAULT_PAGE_MAX_HTML
from scrapy_robotrules.engine.robots.agents import TOKEN, AgentMatch, product_token
from scrapy_robotrules.engine.robots.fetch_outcomes import DEFAULT_MAX_AGE, DEFAULT_MIN_AGE
from scrapy_robotrules.engine.robots.hostile.automata import DEFAULT_AUTOMATON_BYTES
from scrapy_robotrules.engine.robots.precedence import MOST_SPECIFIC, Precedence
from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE
from scrapy_robotrules.engine.stores import DEFAULT_CACHE_BYTES

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

__all__ = [
    "DEFAULTS",
    "LIMITS",
    "MAX_RETRY_DELAY",
    "PAGE_NOINDEX_CHOICES",
    "USAGE_PURPOSES",
    "RobotRulesConfig",
    "RobotRulesSettingError",
    "crawl_config",
    "named_for_robots",
]

logger = logging.getLogger(__name__)

CONFIG_SETTINGS = (
    "ROBOTRULES_PRECEDENCE",
    "ROBOTRULES_AGENT_MATCH",
    "ROBOTRULES_USER_AGENT",
    "ROBOTRULES_MAX_SIZE",
    "ROBOTRULES_UNAUTHORIZED",
    "ROBOTRULES_RETRY_DELAY",
    "ROBOTRULES_UNREACHABLE_TIMEOUT",
    "ROBOTRULES_MAX_AGE",
    "ROBOTRULES_MIN_AGE",
    "ROBOTRULES_CACHE_SIZE",
    "ROBOTRULES_CACHE_BYTES",
    "ROBOTRULES_AUTOMATON_BYTES",
    "ROBOTRULES_CRAWL_DELAY",
    "ROBOTRULES_MAX_CRAWL_DELAY",
    "ROBOTRULES_MAX_WAITING_PER_ORIGIN",
    "ROBOTRULES_CONCURRENT_FETCHES",
    "ROBOTRULES_STORE",
    "ROBOTRULES_LEASE",
    "ROBOTRULES_PAGE_NOFOLLOW",
    "ROBOTRULES_PAGE_NOFOLLOW_LINKS",
    "ROBOTRULES_PAGE_NOINDEX",
    "ROBOTRULES_PAGE_NOINDEX_FIELD",
    "ROBOTRULES_PAGE_MAX_HTML",
    "ROBOTRULES_PURPOSES",
    "ROBOTRULES_USAGE_ITEMS",
    "ROBOTRULES_USAGE_FIELD",
)
"""The settings :class:`RobotRulesConfig` holds, one field each (the others: operator
controls, site policies and sitemaps, are read by their own components)."""

DEFAULTS: dict[str, Any] = {name: TABLE[name].default for name in CONFIG_SETTINGS}
"""The defaults of the settings the config holds (:data:`.setting_table.TABLE` has them all)."""


@dataclass(frozen=True)
class RobotRulesConfig:
    """The settings of one crawl, checked. Build it with :meth:`from_crawler`."""

    user_agent: str
    """The agent string robots.txt groups are matched against (by its product token)."""
    precedence: Precedence = MOST_SPECIFIC
    agent_match: AgentMatch = TOKEN
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
        fields = {
            name.removeprefix("ROBOTRULES_").lower(): value(settings, name)
            for name in CONFIG_SETTINGS
        }
        precedence = spider_value(spider, "robotrules_precedence", settings)
        if precedence is not None:
            fields["precedence"] = precedence
        fields["user_agent"] = _user_agent(settings, spider) if agent else "*"
        return cls(**fields)

    @classmethod
    def from_crawler(cls, crawler: Crawler, spider: Spider | None = None) -> RobotRulesConfig:
        """The config of ``crawler``, with ``spider`` (by default the crawler's) applied."""
        return cls.from_settings(crawler.settings, spider if spider is not None else crawler.spider)


def named_for_robots(settings: BaseSettings, spider: Spider | None) -> bool:
    """Whether an agent is named for robots.txt itself, not only for the requests.

    That is the spider's ``robotrules_user_agent``, ``ROBOTRULES_USER_AGENT``
    or ``ROBOTSTXT_USER_AGENT``. Without one, the agent a request sends (its
    own ``User-Agent`` header, else the spider's or ``USER_AGENT``) is the
    one robots.txt is asked about, as Scrapy's ``RobotsTxtMiddleware`` does.
    """
    named = (
        spider_value(spider, "robotrules_user_agent", settings),
        value(settings, "ROBOTRULES_USER_AGENT"),
        settings.get("ROBOTSTXT_USER_AGENT"),
    )
    return any(given not in (None, "", b"") for given in named)


def _user_agent(settings: BaseSettings, spider: Spider | None) -> str:
    """The first agent given: spider attribute, then the settings' fallback chain."""
    candidates: list[tuple[str, object]] = []
    if spider is not None:
        attribute = "robotrules_user_agent"
        candidates.append(
            (attribute_name(spider, attribute), spider_value(spider, attribute, settings))
        )
    candidates += [
        ("ROBOTRULES_USER_AGENT", value(settings, "ROBOTRULES_USER_AGENT")),
        ("ROBOTSTXT_USER_AGENT", settings.get("ROBOTSTXT_USER_AGENT")),
    ]
    if spider is not None:
        candidates.append((attribute_name(spider, "user_agent"), defined(spider, "user_agent")))
    candidates.append(("USER_AGENT", settings.get("USER_AGENT")))
    for name, given in candidates:
        agent = as_agent(name, given)
        if agent is not None:
            return agent
    names = ", ".join(name for name, _ in candidates)
    raise RobotRulesSettingError(
        f"no user agent to match robots.txt groups with: set one of {names}"
    )


def crawl_config(crawler: Crawler) -> RobotRulesConfig:
    """The config of a crawl about to start: a bad setting stops it, with one ERROR line.

    Every setting of the table and every ``robotrules_*`` attribute of the
    spider is checked here (:func:`.setting_table.check`), those the config
    does not hold too, so no component finds a bad value later; a
    ``ROBOTRULES_*`` setting or ``robotrules_*`` attribute the package does
    not know gets one WARNING naming the closest real one, and the old name
    of a renamed setting one ``ScrapyDeprecationWarning`` naming the new one.

    The :class:`RobotRulesSettingError` still propagates, so that the crawl
    fails (``scrapy crawl`` exits with status 1, ``CrawlerRunner.crawl``
    fails with it). Running as an asyncio task (``scrapy crawl``,
    ``AsyncCrawlerProcess``), the task's exception is marked as seen, since
    the ERROR line said it all: asyncio would print a 40-line traceback for
    a typo in a setting. Scrapy's Deferred-based ``CrawlerProcess`` still
    reports it as an unhandled error; its last line is this message.
    """
    for line in unknown(crawler.settings, crawler.spider):
        logger.warning("%(line)s", {"line": line})
    for line in deprecated(crawler.settings):
        warnings.warn(line, ScrapyDeprecationWarning, stacklevel=1)
    try:
        check(crawler.settings, crawler.spider)
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
