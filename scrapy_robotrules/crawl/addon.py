"""The add-on: ``ADDONS = {"scrapy_robotrules.Addon": 0}`` is all a project needs.

It puts :class:`~scrapy_robotrules.RobotRulesMiddleware` where Scrapy's
``RobotsTxtMiddleware`` sits (priority 100), turns the built-in off and
enables :class:`~scrapy_robotrules.RobotRulesExtension`,
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

from scrapy_robotrules.crawl.compat import component_priority, disable_component
from scrapy_robotrules.crawl.config.table import check
from scrapy_robotrules.crawl.config.values import RobotRulesSettingError
from scrapy_robotrules.crawl.extension import RobotRulesExtension
from scrapy_robotrules.crawl.fetching.bodies import MIDDLEWARE_PRIORITY, RobotsBodyMiddleware
from scrapy_robotrules.crawl.middleware import RobotRulesMiddleware
from scrapy_robotrules.crawl.pages.directive_middleware import PageDirectivesMiddleware
from scrapy_robotrules.crawl.pages.usage import UsagePreferencesMiddleware

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["Addon"]

BUILTIN_PRIORITY = 100
"""Where Scrapy's RobotsTxtMiddleware sits in DOWNLOADER_MIDDLEWARES_BASE."""
EXTENSION_PRIORITY = 0
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
