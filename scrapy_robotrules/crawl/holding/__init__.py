"""Holding requests: those waiting for their origin's robots.txt, parked in memory or on disk."""
