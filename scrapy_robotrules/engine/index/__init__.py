"""Finding the rule that decides a path fast, whatever the file (SPEC 4 and 5).

:mod:`.rules` holds :class:`RuleIndex`, the index of one crawler's rules;
:mod:`.prefixes` finds plain prefix rules by bisection, :mod:`.wildcards`
buckets wildcard rules by the text before their ``*``, and :mod:`.literals`
finds many of them at once with an Aho-Corasick automaton (a short path's
are looked up instead while that costs less, :mod:`.windows`). Which matching
rule wins is not decided here: :mod:`..precedence` says it.
"""

from __future__ import annotations

from scrapy_robotrules.engine.index.columns import ManyStars, StarRules
from scrapy_robotrules.engine.index.rules import RuleIndex
from scrapy_robotrules.engine.index.wildcards import WildRule

__all__ = ["ManyStars", "RuleIndex", "StarRules", "WildRule"]
