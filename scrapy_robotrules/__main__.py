"""``python -m scrapy_robotrules``: the ``robotrules`` command line."""

from scrapy_robotrules.engine.cli.main import run

run()
