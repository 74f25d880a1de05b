"""The rules engine: robots.txt read, matched and explained, with no Scrapy, Twisted or w3lib.

SPEC 1-7 live here, and the fetch policy of SPEC 8 (:mod:`.fetch_policy`)
with the stores that keep rules between fetches (:mod:`.stores`). The
crawl layer (``scrapy_robotrules.crawl``) imports this package, never the
other way round. :mod:`.page` reads page-level rules and :mod:`.usage`
usage preferences, both outside the SPEC.
"""
