"""``python -m scrapy_robotrules``: the ``robotrules`` command line."""

from .engine.cli import run

run()
