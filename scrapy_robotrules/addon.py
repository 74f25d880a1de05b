"""The add-on: ``ADDONS = {"scrapy_robotrules.Addon": 0}`` is all a project needs.

It puts :class:`~scrapy_robotrules.RobotRulesMiddleware` where Scrapy's
``RobotsTxtMiddleware`` sits (priority 100), turns the built-in off and
enables :class:`~scrapy_robotrules.RobotRulesExtension`. If the project
moved the built-in, the middleware takes its place there. A priority (or
``None``) the project gave either class of this package itself stays as it
is. ``ROBOTSTXT_OBEY`` remains the switch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

from .compat import component_priority, disable_component
from .extension import RobotRulesExtension
from .middleware import RobotRulesMiddleware

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["Addon"]

BUILTIN_PRIORITY = 100
"""Where Scrapy's RobotsTxtMiddleware sits in DOWNLOADER_MIDDLEWARES_BASE."""
EXTENSION_PRIORITY = 0


class Addon:
    """Swaps Scrapy's robots.txt middleware for this package's middleware and extension."""

    def update_settings(self, settings: BaseSettings) -> None:
        name = "DOWNLOADER_MIDDLEWARES"
        builtin = component_priority(settings, name, RobotsTxtMiddleware)
        priority = builtin if builtin is not None else BUILTIN_PRIORITY
        settings.setdefault_in_component_priority_dict(name, RobotRulesMiddleware, priority)
        disable_component(settings, name, RobotsTxtMiddleware)
        settings.setdefault_in_component_priority_dict(
            "EXTENSIONS", RobotRulesExtension, EXTENSION_PRIORITY
        )
