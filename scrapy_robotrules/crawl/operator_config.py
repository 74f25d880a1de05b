"""The operator's settings of issue 16 this layer reads: the mode and the audit trail.

``ROBOTRULES_MODE`` (``"enforce"`` or ``"shadow"``; the spider's
``robotrules_mode`` attribute overrides it, as ``robotrules_precedence``
does), ``ROBOTRULES_AUDIT`` (a path or any URI Scrapy's ``FEED_STORAGES``
accept) and ``ROBOTRULES_AUDIT_BUFFER`` (audit lines held in memory at most).
Checked once when the crawl starts: a bad value stops it with
:class:`RobotRulesSettingError`, whose message names the setting.

SPEC: none (what is decided does not change; only what is done with it and written).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from scrapy.utils.python import without_none_values

from ..engine.audit import ENFORCE, MODES, url_without_credentials
from .setting_values import RobotRulesSettingError, as_choice, as_number, invalid

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

__all__ = ["DEFAULTS", "OperatorConfig", "operator_config", "storage_class"]

logger = logging.getLogger(__name__)

DEFAULTS: dict[str, Any] = {
    "ROBOTRULES_MODE": ENFORCE,
    "ROBOTRULES_AUDIT": None,
    "ROBOTRULES_AUDIT_BUFFER": 10_000,
}
"""The settings of this module, with their defaults."""
MAX_AUDIT_BUFFER = 10_000_000


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


def storage_class(settings: BaseSettings, uri: str) -> str | type[Any]:
    """The feed storage for ``uri``, chosen as Scrapy's ``FeedExporter`` chooses it.

    Raises :class:`RobotRulesSettingError` for a scheme no storage takes.
    """
    storages = without_none_values(settings.getwithbase("FEED_STORAGES"))
    scheme = urlparse(uri).scheme
    if len(scheme) <= 1:  # a path (``C:`` is a Windows drive, not a scheme)
        scheme = ""
    if scheme not in storages:
        known = ", ".join(sorted(repr(s) for s in storages if s))
        raise RobotRulesSettingError(
            f"ROBOTRULES_AUDIT: no feed storage for {scheme!r} URIs"
            f" (FEED_STORAGES has {known}): {url_without_credentials(uri)!r}"
        )
    found: str | type[Any] = storages[scheme]
    return found


def _audit(settings: BaseSettings) -> str | None:
    value = settings.get("ROBOTRULES_AUDIT", DEFAULTS["ROBOTRULES_AUDIT"])
    if value is None or value == "":
        return None
    if hasattr(value, "__fspath__"):  # a pathlib.Path, as FEEDS accepts
        value = str(value.__fspath__())
    if not isinstance(value, str) or not value.strip():
        raise invalid("ROBOTRULES_AUDIT", "a path or a feed storage URI", type(value).__name__)
    uri = value.strip()
    storage_class(settings, uri)
    return uri


def _buffer(settings: BaseSettings) -> int:
    name = "ROBOTRULES_AUDIT_BUFFER"
    value = settings.get(name, DEFAULTS[name])
    number = as_number(value)
    if number is None or not number.is_integer() or not 1 <= number <= MAX_AUDIT_BUFFER:
        raise invalid(name, f"a whole number from 1 to {MAX_AUDIT_BUFFER}", value)
    return int(number)


def operator_config(crawler: Crawler) -> OperatorConfig:
    """The mode and audit settings of ``crawler`` (its spider's attribute applied)."""
    settings = crawler.settings
    try:
        mode = as_choice(
            "ROBOTRULES_MODE", settings.get("ROBOTRULES_MODE", DEFAULTS["ROBOTRULES_MODE"]), MODES
        )
        spider = crawler.spider
        attribute = getattr(spider, "robotrules_mode", None)
        if attribute is not None:
            name = getattr(spider, "name", None) or type(spider).__name__
            mode = as_choice(f"robotrules_mode (attribute of spider {name!r})", attribute, MODES)
        return OperatorConfig(mode=mode, audit=_audit(settings), audit_buffer=_buffer(settings))
    except RobotRulesSettingError as error:
        logger.error("%(error)s: the crawl cannot start", {"error": error})
        raise
