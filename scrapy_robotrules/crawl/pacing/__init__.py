"""Pacing: the delays a site's rules and policies ask for, kept through Scrapy's download slots."""
