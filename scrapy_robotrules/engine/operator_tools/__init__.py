"""What an operator configures and reads (SPEC 6 and 8 where cited; else outside the SPEC).

:mod:`.site_policies` reads per-site policies (``ROBOTRULES_POLICIES``),
:mod:`.site_delays` keeps a site's Crawl-delay under them (SPEC 6),
:mod:`.pins` reads the pinned files an operator approved (SPEC 8), and
:mod:`.audit_trail` builds and sums up the audit trail's lines (SPEC 7 and 8).
"""
