"""The rules engine: robots.txt read, matched and explained, with no Scrapy, Twisted or w3lib.

Split by meaning: :mod:`.robots` holds the robots.txt rules (SPEC 1-7 and
the fetch outcomes of SPEC 8), :mod:`.stores` keeps them between fetches
(SPEC 8), and :mod:`.database` is the rules of many hosts over a store
(:class:`.RobotRules`). :mod:`.page` reads page-level rules and
:mod:`.usage` usage preferences (both outside the SPEC),
:mod:`.operator_tools` holds what an operator configures and reads (site
policies, delays, pins, the audit trail) and :mod:`.cli` is the
``robotrules`` command line. Below them all: :mod:`.digests` (the SHA-256
a file goes by), :mod:`.untrusted` (setting values read within bounds) and
:mod:`.possessive` (regular expressions that never backtrack).

The layers point one way (``tests/test_layers.py`` reads every import):
the rules import neither the stores nor the database; the stores may
import the rules; the database imports both. The crawl layer
(``scrapy_robotrules.crawl``) imports this package, never the other way round.
"""
