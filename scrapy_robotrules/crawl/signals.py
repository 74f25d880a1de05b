"""Signals sent by scrapy-robotrules, besides Scrapy's own ``robots_parsed``.

``robotrules_fetched``
    Sent each time a fetch of an origin's robots.txt ends, whatever its
    outcome. Arguments: ``origin`` (``scheme://host[:port]``), ``robots``
    (the parsed :class:`~scrapy_robotrules.RobotsTxt`, with its
    ``sitemaps``, or ``None`` when the fetch gave no file), ``outcome``
    (a :class:`~scrapy_robotrules.Outcome`), ``status`` (the final HTTP
    status, ``None`` after a network error) and ``request`` (the request
    that made the fetch happen).

``robotrules_changed``
    Sent when an origin's robots.txt is replaced by a file with another
    body (a refresh, or a file another crawler of a fleet fetched).
    Arguments: ``origin``, ``old`` and ``new`` (both
    :class:`~scrapy_robotrules.RobotsTxt`), ``old_sha256`` and
    ``new_sha256`` (hex), ``added`` and ``removed`` (``Allow``/``Disallow``
    lines for the crawler's agent) and ``request`` (the request that made
    the fetch happen; ``None`` for another crawler's file).

SPEC 8 (what each fetch of robots.txt ended in, and a file that changed).
"""

from __future__ import annotations

__all__ = ["robotrules_changed", "robotrules_fetched"]

robotrules_fetched = object()
robotrules_changed = object()
