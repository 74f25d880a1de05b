"""Pacing: the delays a site's rules and policies ask for, kept through Scrapy's download slots.

SPEC: none of its own; see its modules.
"""
