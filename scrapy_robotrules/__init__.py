"""robots.txt done right for Scrapy.

Two layers: :mod:`.engine` (the rules engine, :class:`RobotsTxt`,
:class:`RobotRules`, its stores) imports nothing from Scrapy, Twisted or
w3lib; :mod:`.crawl`, the crawl layer, is the Scrapy part on top of it.
The names below are the stable API, whatever module they live in: the
crawl layer's are loaded on first access, so ``from scrapy_robotrules
import RobotsTxt`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robotrules.engine.database import RobotRules
from scrapy_robotrules.engine.operator_tools.site_policies import PolicyError
from scrapy_robotrules.engine.page.directives import PageDirectives, parse_page_directives
from scrapy_robotrules.engine.robots.agents import AgentMatch
from scrapy_robotrules.engine.robots.check_work import CheckWork
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.robots.hostile.automata import set_automaton_bytes
from scrapy_robotrules.engine.robots.pacing_lines import RequestRate, UtcWindow
from scrapy_robotrules.engine.robots.precedence import Precedence
from scrapy_robotrules.engine.robots.robotstxt import AgentLine, Decision, Group, RobotsTxt, Rule
from scrapy_robotrules.engine.robots.signal_lines import License
from scrapy_robotrules.engine.stores import (
    CachedStore,
    Entry,
    MemoryStore,
    RulesStore,
    StoreError,
    open_store,
)
from scrapy_robotrules.engine.usage.preferences import UsageView
from scrapy_robotrules.engine.usage.vocabulary import AIPREF_DRAFTS

# The public names, the engine's and the crawl layer's (_SCRAPY_LAYER below):
# what semantic versioning covers (CHANGES.rst).
__all__ = [
    "AIPREF_DRAFTS",
    "Addon",
    "AgentLine",
    "AgentMatch",
    "CachedStore",
    "CheckWork",
    "Decision",
    "Entry",
    "Group",
    "License",
    "MemoryStore",
    "Outcome",
    "PageDirectives",
    "PageDirectivesMiddleware",
    "PageNofollow",
    "PolicyError",
    "Precedence",
    "RequestRate",
    "RobotParser",
    "RobotRules",
    "RobotRulesExtension",
    "RobotRulesMiddleware",
    "RobotRulesScheduler",
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

# The crawl layer, imported on first access (PEP 562): importing the engine
# must not import Scrapy or Twisted.
_SCRAPY_LAYER = {
    "Addon": ".crawl.addon",
    "PageDirectivesMiddleware": ".crawl.pages.directive_middleware",
    "PageNofollow": ".crawl.exceptions",
    "RobotParser": ".crawl.robotparser",
    "RobotRulesExtension": ".crawl.extension",
    "RobotRulesMiddleware": ".crawl.middleware",
    "RobotRulesScheduler": ".crawl.scheduler",
    "RobotRulesSettingError": ".crawl.config.settings",
    "RobotsBodyMiddleware": ".crawl.fetching.bodies",
    "RobotsTxtForbidden": ".crawl.exceptions",
    "RobotsTxtNotFetched": ".crawl.exceptions",
    "RobotsTxtPinMismatch": ".crawl.exceptions",
    "RobotsTxtUnreachable": ".crawl.exceptions",
    "UsagePreferencesMiddleware": ".crawl.pages.usage",
    "robotrules_changed": ".crawl.signals",
    "robotrules_fetched": ".crawl.signals",
}

if TYPE_CHECKING:
    from scrapy_robotrules.crawl.addon import Addon as Addon
    from scrapy_robotrules.crawl.config.settings import (
        RobotRulesSettingError as RobotRulesSettingError,
    )
    from scrapy_robotrules.crawl.exceptions import PageNofollow as PageNofollow
    from scrapy_robotrules.crawl.exceptions import RobotsTxtForbidden as RobotsTxtForbidden
    from scrapy_robotrules.crawl.exceptions import RobotsTxtNotFetched as RobotsTxtNotFetched
    from scrapy_robotrules.crawl.exceptions import RobotsTxtPinMismatch as RobotsTxtPinMismatch
    from scrapy_robotrules.crawl.exceptions import RobotsTxtUnreachable as RobotsTxtUnreachable
    from scrapy_robotrules.crawl.extension import RobotRulesExtension as RobotRulesExtension
    from scrapy_robotrules.crawl.fetching.bodies import RobotsBodyMiddleware as RobotsBodyMiddleware
    from scrapy_robotrules.crawl.middleware import RobotRulesMiddleware as RobotRulesMiddleware
    from scrapy_robotrules.crawl.pages.directive_middleware import (
        PageDirectivesMiddleware as PageDirectivesMiddleware,
    )
    from scrapy_robotrules.crawl.pages.usage import (
        UsagePreferencesMiddleware as UsagePreferencesMiddleware,
    )
    from scrapy_robotrules.crawl.robotparser import RobotParser as RobotParser
    from scrapy_robotrules.crawl.scheduler import RobotRulesScheduler as RobotRulesScheduler
    from scrapy_robotrules.crawl.signals import robotrules_changed as robotrules_changed
    from scrapy_robotrules.crawl.signals import robotrules_fetched as robotrules_fetched


def __getattr__(name: str) -> object:
    module = _SCRAPY_LAYER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names and the module's dunders: not the imports that build them."""
    dunders = (name for name in globals() if name.startswith("__") and name.endswith("__"))
    return sorted({*__all__, *dunders})
