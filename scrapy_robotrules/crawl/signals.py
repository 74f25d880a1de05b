"""Signals sent by scrapy-robotrules, besides Scrapy's own ``robots_parsed``.

``robotrules_fetched``
    Sent each time a fetch of an origin's robots.txt ends, whatever its
    outcome. Arguments: ``origin`` (``scheme://host[:port]``), ``robots``
    (the parsed :class:`~scrapy_robotrules.RobotsTxt`, with its
    ``sitemaps``, or ``None`` when the fetch gave no file), ``outcome``
    (a :class:`~scrapy_robotrules.Outcome`), ``status`` (the final HTTP
    status, ``None`` after a network error) and ``request`` (the request
    that made the fetch happen).

SPEC 8 (what each fetch of robots.txt ended in).
"""

from __future__ import annotations

__all__ = ["robotrules_fetched"]

robotrules_fetched = object()
