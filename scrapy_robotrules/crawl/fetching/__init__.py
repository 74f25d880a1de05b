"""Fetching: robots.txt and tdmrep.json requested, decoded, read, kept per origin, pinned.

SPEC: none of its own; see its modules.
"""
