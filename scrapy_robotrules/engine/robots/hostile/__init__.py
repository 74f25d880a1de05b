"""Hostile files: many wildcard rules found at once by an automaton (SPEC 4 and 5).

Only files with many wildcard rules with a literal after a ``*`` come here
(:data:`.literals.AUTOMATON_MIN`); every other check stays on the common
path of :mod:`scrapy_robotrules.engine.robots.rule_index`. :mod:`.literals`
holds :class:`.literals.Literals`, the automaton search; :mod:`.automata`
keeps all files' automata in one budget of bytes, :mod:`.pieces` reads a
path in overlapping pieces, :mod:`.runs` finds periodic needles from a
path's runs, and :mod:`.windows` looks a short path's needles up instead.
Which matching rule wins is not decided here: :mod:`..precedence` says it.
"""
