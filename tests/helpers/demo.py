"""Running the example project's demo crawl, as a user would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from urllib.parse import urlsplit

from tests.helpers import REPO_ROOT

PROJECT = REPO_ROOT / "example_project"


_LINE = re.compile(r"\[demo\] INFO: (crawled|not crawled) (\S+?):?(?: |$)", re.MULTILINE)


_STAT = re.compile(r"^ *[{ ]'([^']+)': (-?[0-9.]+)[,}]$", re.MULTILINE)


@dataclass(frozen=True)
class Crawl:
    """What one ``scrapy crawl demo`` printed, and its exit status."""

    returncode: int
    log: str

    def pages(self, outcome: str) -> set[str]:
        """``crawled`` or ``not crawled`` pages, as ``<host><path>``: ``shop/about.html``."""
        pages = set()
        for found, url in _LINE.findall(self.log):
            if found == outcome:
                parts = urlsplit(url)
                host = (parts.hostname or "").removesuffix(".localhost")
                pages.add(host + parts.path + (f"?{parts.query}" if parts.query else ""))
        return pages

    @property
    def stats(self) -> dict[str, float]:
        """The numeric stats of the final dump."""
        _, _, dump = self.log.rpartition("Dumping Scrapy stats:")
        return {key: float(value) for key, value in _STAT.findall(dump)}


def run_demo(*arguments: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    for name in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT"):
        env.pop(name, None)  # scrapy.cfg of the example project decides
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "demo", *arguments],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
