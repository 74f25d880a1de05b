"""Deciding: whether a carried decision still holds, and its verdict (enforced or shadowed).

SPEC: none of its own; see its modules.
"""
