"""The rules engine: robots.txt read, matched and explained, with no Scrapy, Twisted or w3lib.

Split by meaning: :mod:`.robots` holds the robots.txt rules (SPEC 1-7 and
the fetch outcomes of SPEC 8), :mod:`.stores` keeps them between fetches
(SPEC 8), :mod:`.page` reads page-level rules and :mod:`.usage` usage
preferences (both outside the SPEC), :mod:`.operator_tools` holds what an
operator configures and reads (site policies, delays, pins, the audit
trail) and :mod:`.cli` is the ``robotrules`` command line. The crawl layer
(``scrapy_robotrules.crawl``) imports this package, never the other way round.
"""
