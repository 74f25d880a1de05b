"""The add-on: ``ADDONS = {"scrapy_robotrules.Addon": 0}`` is all a project needs.

It puts :class:`~scrapy_robotrules.RobotRulesMiddleware` where Scrapy's
``RobotsTxtMiddleware`` sits (priority 100), turns the built-in off and
enables :class:`~scrapy_robotrules.RobotRulesExtension`. If the project
moved the built-in, the middleware takes its place there. A priority (or
``None``) the project gave either class of this package itself stays as it
is. ``ROBOTSTXT_OBEY`` remains the switch.

The add-on also checks the ``ROBOTRULES_*`` settings of the process as soon
as its ``CrawlerProcess`` (or runner) is built, before any crawl: a bad
value ends the program there with one line and exit status 1, as a
command-line usage error does. Scrapy gives no other way out of a
``CrawlerProcess`` script with a non-zero status: a crawl that fails to
start lets ``process.start()`` return normally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.utils.misc import load_object

from .extension import RobotRulesExtension
from .middleware import RobotRulesMiddleware
from .settings import RobotRulesConfig, RobotRulesSettingError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["Addon"]

BUILTIN_PRIORITY = 100
"""Where Scrapy's RobotsTxtMiddleware sits in DOWNLOADER_MIDDLEWARES_BASE."""
EXTENSION_PRIORITY = 0


def _priority_of(settings: BaseSettings, name: str, cls: type) -> int | None:
    """The priority of ``cls`` in the ``name`` setting merged with its base; ``None`` if off."""
    for key, value in settings.get_component_priority_dict_with_base(name).items():
        if load_object(key) is cls:
            return int(value)
    return None


class Addon:
    """Swaps Scrapy's robots.txt middleware for this package's middleware and extension."""

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """Stop a program whose settings are bad before it starts any crawl (Scrapy 2.13+).

        Only what the process settings decide is checked here; spiders
        (``custom_settings``, ``robotrules_*`` attributes) are checked when
        their crawl starts, and their agent then.
        """
        if not settings.getbool("ROBOTSTXT_OBEY"):
            return
        try:
            RobotRulesConfig.from_settings(settings, agent=False)
        except RobotRulesSettingError as error:
            # SystemExit prints its message, without a traceback, and exits with status 1.
            raise SystemExit(f"scrapy-robotrules: {error}") from None

    def update_settings(self, settings: BaseSettings) -> None:
        name = "DOWNLOADER_MIDDLEWARES"
        builtin = _priority_of(settings, name, RobotsTxtMiddleware)
        priority = builtin if builtin is not None else BUILTIN_PRIORITY
        settings.setdefault_in_component_priority_dict(name, RobotRulesMiddleware, priority)
        settings.set_in_component_priority_dict(name, RobotsTxtMiddleware, None)
        settings.setdefault_in_component_priority_dict(
            "EXTENSIONS", RobotRulesExtension, EXTENSION_PRIORITY
        )
