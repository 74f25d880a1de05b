"""The operator's settings the crawl layer reads: the mode and the audit trail.

``ROBOTRULES_MODE`` (``"enforce"`` or ``"shadow"``; the spider's
``robotrules_mode`` attribute overrides it, but not ``-s``, as
``robotrules_precedence`` does), ``ROBOTRULES_AUDIT`` (a path or any URI Scrapy's ``FEED_STORAGES``
accept) and ``ROBOTRULES_AUDIT_BUFFER`` (audit lines held in memory at most).
Read through :mod:`.config.table`, which checks them with every other
setting before the crawl: a bad value stops it with
:class:`RobotRulesSettingError`, whose message names the setting. The
mode changes what is done with a decision, and what is written of it,
never what is decided.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy_robotrules.crawl.config.table import spider_value, value
from scrapy_robotrules.crawl.config.values import RobotRulesSettingError, storage_class
from scrapy_robotrules.engine.operator_tools.audit_trail import ENFORCE

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["OperatorConfig", "operator_config", "storage_class"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OperatorConfig:
    """The mode and audit trail of one crawl, checked."""

    mode: str = ENFORCE
    audit: str | None = None
    """Where the audit trail goes (a path or a feed storage URI); ``None``: no trail."""
    audit_buffer: int = 10_000
    """Audit lines held in memory, waiting for the writer thread, at most."""

    @property
    def shadow(self) -> bool:
        return self.mode != ENFORCE


def operator_config(crawler: Crawler) -> OperatorConfig:
    """The mode and audit settings of ``crawler`` (its spider's attribute applied)."""
    settings = crawler.settings
    try:
        mode = spider_value(crawler.spider, "robotrules_mode", settings)
        return OperatorConfig(
            mode=mode if mode is not None else value(settings, "ROBOTRULES_MODE"),
            audit=value(settings, "ROBOTRULES_AUDIT"),
            audit_buffer=value(settings, "ROBOTRULES_AUDIT_BUFFER"),
        )
    except RobotRulesSettingError as error:
        logger.error("%(error)s: the crawl cannot start", {"error": error})
        raise
