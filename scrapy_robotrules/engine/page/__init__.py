"""Page-level rules: ``X-Robots-Tag`` headers and robots ``meta`` tags (outside the SPEC).

:mod:`.directives` reads them, :mod:`.html` finds a page's meta tags,
:mod:`.dates` reads ``unavailable_after``; ``robotrules page`` is
:mod:`scrapy_robotrules.engine.cli.page_commands`.
"""
