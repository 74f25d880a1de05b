"""robots.txt done right for Scrapy.

Two floors: :mod:`.engine` (the rules engine, :class:`RobotsTxt`,
:class:`RobotRules`, its stores) imports nothing from Scrapy, Twisted or
w3lib; :mod:`.crawl` is the Scrapy layer on top of it. The names below are
the stable API, whatever module they live in: the Scrapy ones are loaded
on first access, so ``from scrapy_robotrules import RobotsTxt`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .engine.agents import AgentMatch
from .engine.database import RobotRules
from .engine.directives import RequestRate, UtcWindow
from .engine.fetch_policy import Outcome
from .engine.index.automata import set_automaton_bytes
from .engine.page.directives import PageDirectives, parse_page_directives
from .engine.policies import PolicyError
from .engine.precedence import Precedence
from .engine.robotstxt import AgentLine, Decision, Group, RobotsTxt, Rule
from .engine.signal_lines import License
from .engine.stores import CachedStore, Entry, MemoryStore, RulesStore, StoreError, open_store
from .engine.usage.preferences import UsageView
from .engine.usage.vocabulary import AIPREF_DRAFTS

# The public names, the engine's and the Scrapy layer's (_SCRAPY_LAYER below):
# what semantic versioning covers (CHANGES.rst).
__all__ = [
    "AIPREF_DRAFTS",
    "Addon",
    "AgentLine",
    "AgentMatch",
    "CachedStore",
    "Decision",
    "Entry",
    "Group",
    "License",
    "MemoryStore",
    "Outcome",
    "PageDirectives",
    "PageDirectivesMiddleware",
    "PolicyError",
    "Precedence",
    "RequestRate",
    "RobotParser",
    "RobotRules",
    "RobotRulesExtension",
    "RobotRulesMiddleware",
    "RobotRulesSettingError",
    "RobotsBodyMiddleware",
    "RobotsTxt",
    "RobotsTxtForbidden",
    "RobotsTxtNotFetched",
    "RobotsTxtPinMismatch",
    "RobotsTxtUnreachable",
    "Rule",
    "RulesStore",
    "StoreError",
    "UsagePreferencesMiddleware",
    "UsageView",
    "UtcWindow",
    "open_store",
    "parse_page_directives",
    "robotrules_changed",
    "robotrules_fetched",
    "set_automaton_bytes",
]

# The one place the version is written: setup.cfg reads it from here.
__version__ = "1.0.0"

# The Scrapy layer, imported on first access (PEP 562): importing the engine
# must not import Scrapy or Twisted.
_SCRAPY_LAYER = {
    "Addon": ".crawl.addon",
    "PageDirectivesMiddleware": ".crawl.pagemiddleware",
    "RobotParser": ".crawl.robotparser",
    "RobotRulesExtension": ".crawl.extension",
    "RobotRulesMiddleware": ".crawl.middleware",
    "RobotRulesSettingError": ".crawl.settings",
    "RobotsBodyMiddleware": ".crawl.content_coding",
    "RobotsTxtForbidden": ".crawl.manager",
    "RobotsTxtNotFetched": ".crawl.manager",
    "RobotsTxtPinMismatch": ".crawl.exceptions",
    "RobotsTxtUnreachable": ".crawl.manager",
    "UsagePreferencesMiddleware": ".crawl.usagemiddleware",
    "robotrules_changed": ".crawl.signals",
    "robotrules_fetched": ".crawl.signals",
}

if TYPE_CHECKING:
    from .crawl.addon import Addon as Addon
    from .crawl.content_coding import RobotsBodyMiddleware as RobotsBodyMiddleware
    from .crawl.exceptions import RobotsTxtPinMismatch as RobotsTxtPinMismatch
    from .crawl.extension import RobotRulesExtension as RobotRulesExtension
    from .crawl.manager import RobotsTxtForbidden as RobotsTxtForbidden
    from .crawl.manager import RobotsTxtNotFetched as RobotsTxtNotFetched
    from .crawl.manager import RobotsTxtUnreachable as RobotsTxtUnreachable
    from .crawl.middleware import RobotRulesMiddleware as RobotRulesMiddleware
    from .crawl.pagemiddleware import PageDirectivesMiddleware as PageDirectivesMiddleware
    from .crawl.robotparser import RobotParser as RobotParser
    from .crawl.settings import RobotRulesSettingError as RobotRulesSettingError
    from .crawl.signals import robotrules_changed as robotrules_changed
    from .crawl.signals import robotrules_fetched as robotrules_fetched
    from .crawl.usagemiddleware import UsagePreferencesMiddleware as UsagePreferencesMiddleware


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
