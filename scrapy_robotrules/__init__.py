"""robots.txt done right for Scrapy.

The rules engine (:class:`RobotsTxt`, :class:`RobotRules`) imports nothing
from Scrapy or Twisted. The Scrapy classes are loaded on first access, so
``from scrapy_robotrules import RobotsTxt`` stays light.
"""

from __future__ import annotations

from .directives import RequestRate, UtcWindow
from .robotstxt import AgentLine, Decision, Group, RobotsTxt, Rule

__all__ = [
    "AgentLine",
    "Decision",
    "Group",
    "RequestRate",
    "RobotsTxt",
    "Rule",
    "UtcWindow",
]

__version__ = "0.1.0"
