"""Pages: the directives and usage preferences of a downloaded page, applied to its links and items.

SPEC: none of its own; see its modules.
"""
