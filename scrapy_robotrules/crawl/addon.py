"""The add-on: ``ADDONS = {"scrapy_robotrules.Addon": 0}`` is all a project needs.

It puts :class:`~scrapy_robotrules.RobotRulesMiddleware` where Scrapy's
``RobotsTxtMiddleware`` sits (priority 100), turns the built-in off and
enables :class:`~scrapy_robotrules.RobotRulesExtension`,
:class:`~scrapy_robotrules.RobotRulesScheduler` as ``SCHEDULER`` (wrapping the
scheduler the project configured, kept as ``ROBOTRULES_SCHEDULER``),
:class:`~scrapy_robotrules.crawl.fetching.bodies.RobotsBodyMiddleware` at 595 (a
compressed robots.txt is unpacked only as far as it is read) and, for
page-level rules, :class:`~scrapy_robotrules.PageDirectivesMiddleware` (a
spider middleware, priority 950). If the project moved the built-in, the
middleware takes its place there. A priority (or
``None``) the project gave either class of this package itself stays as it
is. ``ROBOTSTXT_OBEY`` remains the switch.

The add-on also checks every ``ROBOTRULES_*`` setting of the process (the
whole table of :mod:`.config.table`) as soon as its ``CrawlerProcess`` (or
runner) is built, before any crawl: a bad value ends the program there with
one line and exit status 1, as a command-line usage error does. Scrapy gives no other way out of a
``CrawlerProcess`` script with a non-zero status: a crawl that fails to
start lets ``process.start()`` return normally.

SPEC: none of its own; it wires the parts that hold SPEC 8.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.utils.misc import load_object

from scrapy_robotrules.crawl.compat import component_priority, disable_component
from scrapy_robotrules.crawl.config.table import check
from scrapy_robotrules.crawl.config.values import RobotRulesSettingError
from scrapy_robotrules.crawl.extension import RobotRulesExtension
from scrapy_robotrules.crawl.fetching.bodies import MIDDLEWARE_PRIORITY, RobotsBodyMiddleware
from scrapy_robotrules.crawl.middleware import RobotRulesMiddleware
from scrapy_robotrules.crawl.pages.directive_middleware import PageDirectivesMiddleware
from scrapy_robotrules.crawl.pages.usage import UsagePreferencesMiddleware
from scrapy_robotrules.crawl.scheduler import RobotRulesScheduler, is_robots_scheduler

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["Addon"]

BUILTIN_PRIORITY = 100
"""Where Scrapy's RobotsTxtMiddleware sits in DOWNLOADER_MIDDLEWARES_BASE."""
EXTENSION_PRIORITY = 0
_INNER = "ROBOTRULES_SCHEDULER"
PAGE_PRIORITY = 950
"""Past DepthMiddleware (900): a request dropped for nofollow is dropped before it is counted."""


class Addon:
    """Swaps Scrapy's robots.txt middleware for this package's middleware and extension."""

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """Stop a program whose settings are bad before it starts any crawl (Scrapy 2.13+).

        Only what the process settings decide is checked here; spiders
        (``custom_settings``, ``robotrules_*`` attributes) are checked when
        their crawl starts, and their agent then. Unknown ``ROBOTRULES_*``
        names are reported then too, once logging is set up.
        """
        if not settings.getbool("ROBOTSTXT_OBEY"):
            return
        try:
            check(settings)
        except RobotRulesSettingError as error:
            # SystemExit prints its message, without a traceback, and exits with status 1.
            raise SystemExit(f"scrapy-robotrules: {error}") from None

    def update_settings(self, settings: BaseSettings) -> None:
        self._wrap_scheduler(settings)
        name = "DOWNLOADER_MIDDLEWARES"
        builtin = component_priority(settings, name, RobotsTxtMiddleware)
        priority = builtin if builtin is not None else BUILTIN_PRIORITY
        settings.setdefault_in_component_priority_dict(name, RobotRulesMiddleware, priority)
        disable_component(settings, name, RobotsTxtMiddleware)
        settings.setdefault_in_component_priority_dict(
            name, RobotsBodyMiddleware, MIDDLEWARE_PRIORITY
        )
        settings.setdefault_in_component_priority_dict(
            "EXTENSIONS", RobotRulesExtension, EXTENSION_PRIORITY
        )
        settings.setdefault_in_component_priority_dict(
            "SPIDER_MIDDLEWARES", PageDirectivesMiddleware, PAGE_PRIORITY
        )
        settings.setdefault_in_component_priority_dict(
            "SPIDER_MIDDLEWARES", UsagePreferencesMiddleware, PAGE_PRIORITY + 1
        )

    @staticmethod
    def _wrap_scheduler(settings: BaseSettings) -> None:
        """Make :class:`RobotRulesScheduler` the ``SCHEDULER``, wrapping the one configured.

        The configured one moves to ``ROBOTRULES_SCHEDULER`` at its own
        priority, and this one takes ``SCHEDULER`` at the same priority: the
        project's, a spider's or the command line's choice is kept, inside.
        A project that named this scheduler itself keeps its settings as they are.
        """
        configured = settings.get("SCHEDULER")
        if configured is None or _is_ours(configured):
            return
        priority = settings.getpriority("SCHEDULER") or 0
        # Not read through the table (its value is checked as the scheduler is built):
        # whether the project named one to wrap itself.
        if settings.getpriority(_INNER) is None or settings[_INNER] is None:
            settings.set(_INNER, configured, priority)
        settings.set("SCHEDULER", RobotRulesScheduler, priority)


def _is_ours(configured: object) -> bool:
    try:
        found = load_object(configured) if isinstance(configured, str) else configured
    except Exception:
        return False
    return is_robots_scheduler(found)
