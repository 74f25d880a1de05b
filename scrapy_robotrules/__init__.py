"""robots.txt done right for Scrapy.

The rules engine (:class:`RobotsTxt`, :class:`RobotRules`) imports nothing
from Scrapy or Twisted. The Scrapy classes are loaded on first access, so
``from scrapy_robotrules import RobotsTxt`` stays light.
"""

from __future__ import annotations

from .database import RobotRules
from .directives import RequestRate, UtcWindow
from .fetch_policy import Outcome
from .robotstxt import AgentLine, Decision, Group, RobotsTxt, Rule
from .stores import Entry, MemoryStore, RulesStore

__all__ = [
    "AgentLine",
    "Decision",
    "Entry",
    "Group",
    "MemoryStore",
    "Outcome",
    "RequestRate",
    "RobotRules",
    "RobotsTxt",
    "Rule",
    "RulesStore",
    "UtcWindow",
]

__version__ = "0.1.0"
