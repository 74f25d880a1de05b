"""The robots.txt rules: reading, groups, matching, precedence, decisions (SPEC 1-8).

:mod:`.reading` reads a file's lines, :mod:`.groups` gathers them in groups
and :mod:`.agents` says which apply to a crawler (SPEC 2 and 3);
:mod:`.urls` and :mod:`.patterns` are what a rule matches (SPEC 4),
:mod:`.rule_index` finds the rule that decides a path (with
:mod:`.prefixes`, :mod:`.wildcards` and :mod:`.star_columns`; hostile
files' many wildcards in :mod:`.hostile`), :mod:`.precedence` says which
matching rule wins (SPEC 5), :mod:`.decision` says why (SPEC 7), and
:mod:`.robotstxt` is one file, whose checks :mod:`.check_work` counts
the work of when asked.
:mod:`.pacing_lines` reads Crawl-delay, Request-rate and Visit-time
(SPEC 6), :mod:`.signal_lines` the lines that are signals, :mod:`.lint`
what the reader ignored, :mod:`.rule_changes` how a file differs from the
one it replaces, and :mod:`.fetch_outcomes` what a fetch's HTTP outcome
means (SPEC 8). Many hosts' files are the rules database's
(:mod:`scrapy_robotrules.engine.database`), above this package and the
stores: nothing here imports either.
"""
