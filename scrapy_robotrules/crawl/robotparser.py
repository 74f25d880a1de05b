"""The rules engine behind Scrapy's parser interface (``ROBOTSTXT_PARSER``).

``ROBOTSTXT_PARSER = "scrapy_robotrules.RobotParser"`` gives Scrapy's own
``RobotsTxtMiddleware`` this package's parsing and matching (precedence and
agent matching from the ``ROBOTRULES_*`` settings), while it keeps its own
fetching. The middleware of this package sends its ``robots_parsed`` signal
with one of these too; it answers ``sitemaps()`` (the file's ``Sitemap``
URLs), which a ``SitemapSpider`` reads in Scrapy versions that ask it.

Scrapy's middleware asks with ``ROBOTSTXT_USER_AGENT``, else the request's
``User-Agent``; an agent named for this package (the spider's
``robotrules_user_agent``, ``ROBOTRULES_USER_AGENT``) is asked about
instead, as this package's own middleware does. Without a crawler
(``from_crawler(None, body)``, as Scrapy's own parser tests build parsers),
the defaults apply.

SPEC 3, 5 and 7, through Scrapy's parser interface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.robotstxt import RobotParser as ScrapyRobotParser
from scrapy.utils.python import to_unicode

from scrapy_robotrules.crawl.config.settings import RobotRulesConfig, named_for_robots
from scrapy_robotrules.engine.robots.agents import TOKEN, AgentMatch
from scrapy_robotrules.engine.robots.precedence import MOST_SPECIFIC, Precedence
from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["RobotParser"]


class RobotParser(ScrapyRobotParser):
    """A parsed robots.txt answering Scrapy's questions; ``robots`` is the file itself."""

    def __init__(
        self,
        robots: RobotsTxt,
        *,
        precedence: Precedence = MOST_SPECIFIC,
        agent_match: AgentMatch = TOKEN,
        user_agent: str | None = None,
    ) -> None:
        self.robots = robots
        self.precedence = precedence
        self.agent_match = agent_match
        self.user_agent = user_agent
        """When set, the agent asked about whatever agent the caller names."""

    @classmethod
    def from_crawler(cls, crawler: Crawler | None, robotstxt_body: bytes) -> Self:
        if crawler is None:
            return cls(RobotsTxt.parse(robotstxt_body))
        config = RobotRulesConfig.from_crawler(crawler)
        robots = RobotsTxt.parse(robotstxt_body, max_size=config.max_size)
        named = named_for_robots(crawler.settings, crawler.spider)
        return cls(
            robots,
            precedence=config.precedence,
            agent_match=config.agent_match,
            user_agent=config.user_agent if named else None,
        )

    def _agent(self, user_agent: str | bytes) -> str:
        return self.user_agent if self.user_agent is not None else to_unicode(user_agent)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return self.robots.allowed(
            to_unicode(url), self._agent(user_agent), self.precedence, self.agent_match
        )

    def explain(self, url: str | bytes, user_agent: str | bytes) -> Decision:
        """The decision for ``url`` with the rule and line behind it."""
        return self.robots.explain(
            to_unicode(url), self._agent(user_agent), self.precedence, self.agent_match
        )

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        return self.robots.crawl_delay(self._agent(user_agent), self.agent_match)

    def sitemaps(self) -> list[str]:
        """The file's ``Sitemap`` URLs, made absolute (SPEC 6), as Scrapy's interface asks."""
        return list(self.robots.sitemaps)

    def __repr__(self) -> str:
        return f"<RobotParser {self.robots!r} {self.precedence} {self.agent_match}>"
