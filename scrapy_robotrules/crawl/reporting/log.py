"""What log lines show: URLs and requests without credentials, counts, and DEBUG lines
only when a handler may show them.

A leaf: any part imports it without importing the reporter. Each part logs
through a logger named after its module.
SPEC 8 (nothing secret reaches a log line).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.utils.url import strip_url

if TYPE_CHECKING:
    from scrapy import Request

__all__ = ["counted", "debug_shown", "shown", "shown_url"]


def shown_url(url: str) -> str:
    """``url`` fit for a log line: no user name or password."""
    return strip_url(url, strip_credentials=True, strip_default_port=False)


def debug_shown(logger: logging.Logger) -> bool:
    """Whether a DEBUG line of ``logger`` may reach a handler at all.

    Scrapy leaves loggers' levels unset and gives its handler ``LOG_LEVEL``:
    ``isEnabledFor(DEBUG)`` then holds, and a line no handler shows is still
    built, with its record and its formatting, for nothing. A logger's
    filter may change a record: with one, the line is made.
    """
    if not logger.isEnabledFor(logging.DEBUG):
        return False
    current: logging.Logger | None = logger
    handlers = False
    while current is not None:
        if current.filters:
            return True
        for handler in current.handlers:
            handlers = True
            if handler.level <= logging.DEBUG:
                return True
        current = current.parent if current.propagate else None
    return not handlers  # none at all: logging's last resort decides


def shown(request: Request) -> str:
    """A request as Scrapy shows it (``<GET url>``), without a user name or password."""
    return f"<{request.method} {shown_url(request.url)}>"


def counted(count: int, noun: str, plural: str = "") -> str:
    """``1 origin``, ``2 origins``: a count and its noun, as a person writes them."""
    return f"{count} {noun if count == 1 else plural or f'{noun}s'}"
