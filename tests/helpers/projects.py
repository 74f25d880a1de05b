"""A one-spider Scrapy project in a directory, and Python run in it, as a user runs a crawl.

The settings tests start ``scrapy crawl`` or a ``CrawlerProcess`` script in
a process of their own, to see what a bad setting prints and the exit
status: the project ``tp`` (the add-on on, ``ROBOTSTXT_OBEY = True``) with
one spider, ``demo``, that fetches a ``data:`` URL.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import REPO_ROOT
from tests.helpers.crawling import in_thread

SPIDER = """
import scrapy


class Demo(scrapy.Spider):
    name = "demo"
    start_urls = {start_urls!r}
    custom_settings = {custom}
{attributes}
    def parse(self, response):
        pass
"""

SCRIPT = """
from scrapy.crawler import {process}

from tp.spiders.demo import Demo  # the project beside this script

process = {process}({settings!r})
process.crawl(Demo)
process.start()
"""


def demo_project(
    directory: Path,
    custom: dict[str, Any] | None = None,
    *,
    attributes: dict[str, Any] | None = None,
    start_urls: tuple[str, ...] = ("data:,hello",),
    settings: dict[str, Any] | None = None,
) -> None:
    """Write the project ``tp`` into ``directory``; ``custom``: the spider's ``custom_settings``.

    ``attributes``: more class attributes of the spider (``robotrules_user_agent``...);
    ``settings``: more lines of the project's ``settings.py``.
    """
    (directory / "scrapy.cfg").write_text("[settings]\ndefault = tp.settings\n")
    package = directory / "tp"
    (package / "spiders").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "spiders" / "__init__.py").write_text("")
    (package / "settings.py").write_text(
        'SPIDER_MODULES = ["tp.spiders"]\nROBOTSTXT_OBEY = True\n'
        'ADDONS = {"scrapy_robotrules.Addon": 0}\nTELNETCONSOLE_ENABLED = False\n'
        + "".join(f"{name} = {value!r}\n" for name, value in (settings or {}).items())
    )
    lines = "".join(f"    {name} = {value!r}\n" for name, value in (attributes or {}).items())
    (package / "spiders" / "demo.py").write_text(
        SPIDER.format(custom=repr(custom), start_urls=list(start_urls), attributes=lines)
    )


def crawl_script(
    directory: Path, settings: dict[str, Any], process: str = "CrawlerProcess"
) -> Path:
    """A script beside the project that crawls ``demo`` with ``process(settings)``."""
    script = directory / "run.py"
    script.write_text(SCRIPT.format(process=process, settings=settings))
    return script


def run_in(directory: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in ``directory``, this checkout's package importable, output kept."""
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(
        args,
        cwd=directory,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def crawl_in(directory: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """:func:`run_in` in a thread, awaited: the test's own servers answer meanwhile.

    In each of Scrapy's modes (:func:`tests.helpers.crawling.in_thread`):
    the reactor, or the asyncio loop of a run without one, keeps running.
    """
    return await in_thread(run_in, directory, args)
