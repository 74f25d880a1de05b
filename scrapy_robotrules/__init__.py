"""robots.txt done right for Scrapy.

The rules engine (:class:`RobotsTxt`, :class:`RobotRules`) imports nothing
from Scrapy or Twisted. The Scrapy classes are loaded on first access, so
``from scrapy_robotrules import RobotsTxt`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cached_store import CachedStore, open_store
from .database import RobotRules
from .directives import RequestRate, UtcWindow
from .fetch_policy import Outcome
from .pagedirectives import PageDirectives, parse_page_directives
from .robotstxt import AgentLine, Decision, Group, RobotsTxt, Rule
from .stores import Entry, MemoryStore, RulesStore

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
    "Addon": ".addon",
    "PageDirectivesMiddleware": ".pagemiddleware",
    "RobotParser": ".robotparser",
    "RobotRulesExtension": ".extension",
    "RobotRulesMiddleware": ".middleware",
}

if TYPE_CHECKING:
    from .addon import Addon as Addon
    from .extension import RobotRulesExtension as RobotRulesExtension
    from .middleware import RobotRulesMiddleware as RobotRulesMiddleware
    from .pagemiddleware import PageDirectivesMiddleware as PageDirectivesMiddleware
    from .robotparser import RobotParser as RobotParser


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
