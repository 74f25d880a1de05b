"""``python -m scrapy_robotrules``: the ``robotrules`` command line."""

from .cli import run

run()
