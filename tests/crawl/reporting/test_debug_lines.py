"""DEBUG lines of the package's loggers are only made when some handler may show them."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from scrapy_robotrules.crawl.reporting.log import debug_shown

logger = logging.getLogger(__name__)
"""A logger as the package's parts have, named after its module."""


@pytest.fixture
def quiet() -> Iterator[logging.Handler]:
    """Logging as Scrapy sets it up: DEBUG enabled, one handler at LOG_LEVEL.

    On the logger itself, not propagated: pytest's own handlers
    take every level.
    """
    saved = logger.handlers[:], logger.level, logger.propagate
    logger.setLevel(logging.DEBUG)  # as Scrapy's unset levels leave it: enabled
    logger.propagate = False
    handler = logging.StreamHandler()
    handler.setLevel(logging.WARNING)
    logger.handlers[:] = [handler]
    yield handler
    logger.handlers[:], level, logger.propagate = saved
    logger.setLevel(level)


def test_no_debug_line_is_made_for_handlers_above_debug(quiet: logging.Handler) -> None:
    logger.handlers[:] = [quiet]  # without pytest's, added since
    assert logger.isEnabledFor(logging.DEBUG)
    assert not debug_shown(logger)


def test_a_debug_handler_or_a_filter_gets_its_lines(quiet: logging.Handler) -> None:
    logger.handlers[:] = [quiet]
    quiet.setLevel(logging.DEBUG)
    assert debug_shown(logger)
    quiet.setLevel(logging.WARNING)
    raise_all = logging.Filter()
    logger.addFilter(raise_all)  # a filter may change a record's level
    try:
        assert debug_shown(logger)
    finally:
        logger.removeFilter(raise_all)


def test_no_handler_at_all_is_left_to_logging(quiet: logging.Handler) -> None:
    logger.handlers[:] = []
    assert debug_shown(logger)
