"""The crawl layer, on Scrapy: add-on, settings, middlewares, extension, parser plug-in, signals.

The manager (``manager.py``) coordinates the parts a running crawl needs.
SPEC 8 for a running crawl; SPEC 1-7 come from the engine.
"""
