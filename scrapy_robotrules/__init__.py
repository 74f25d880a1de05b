"""robots.txt done right for Scrapy.

The rules engine (:class:`RobotsTxt`, :class:`RobotRules`) imports nothing
from Scrapy or Twisted. The Scrapy classes are loaded on first access, so
``from scrapy_robotrules import RobotsTxt`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .engine.database import RobotRules
from .engine.directives import RequestRate, UtcWindow
from .engine.fetch_policy import Outcome
from .engine.page.directives import PageDirectives, parse_page_directives
from .engine.robotstxt import AgentLine, Decision, Group, RobotsTxt, Rule
from .engine.stores import CachedStore, Entry, MemoryStore, RulesStore, open_store

__all__ = [
    "AgentLine",
    "CachedStore",
    "Decision",
    "Entry",
    "Group",
    "MemoryStore",
    "Outcome",
    "PageDirectives",
    "RequestRate",
    "RobotRules",
    "RobotsTxt",
    "Rule",
    "RulesStore",
    "UtcWindow",
    "open_store",
    "parse_page_directives",
]

__version__ = "0.1.0"

# The Scrapy layer, imported on first access (PEP 562): importing the engine
# must not import Scrapy or Twisted.
_SCRAPY_LAYER = {
    "Addon": ".crawl.addon",
    "PageDirectivesMiddleware": ".crawl.pagemiddleware",
    "RobotParser": ".crawl.robotparser",
    "RobotRulesExtension": ".crawl.extension",
    "RobotRulesMiddleware": ".crawl.middleware",
}

if TYPE_CHECKING:
    from .crawl.addon import Addon as Addon
    from .crawl.extension import RobotRulesExtension as RobotRulesExtension
    from .crawl.middleware import RobotRulesMiddleware as RobotRulesMiddleware
    from .crawl.pagemiddleware import PageDirectivesMiddleware as PageDirectivesMiddleware
    from .crawl.robotparser import RobotParser as RobotParser


def __getattr__(name: str) -> object:
    module = _SCRAPY_LAYER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_SCRAPY_LAYER})
