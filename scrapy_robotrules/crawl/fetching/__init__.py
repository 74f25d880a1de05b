"""Fetching: robots.txt and tdmrep.json requested, decoded, read, kept per origin, pinned."""
