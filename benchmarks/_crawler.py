"""What the crawl benchmarks share: the compared variants' settings and running a worker.

``crawl.py``, ``fleet.py`` and ``cpu_per_page.py`` compare the same three
variants with the same Scrapy settings: ``builtin`` (Scrapy's
``RobotsTxtMiddleware``), ``ours`` (this package's add-on) and
``obey-false`` (``ROBOTSTXT_OBEY=False``). Each crawl runs in a fresh
process (``python <script> --worker ...``) that prints one JSON line last.
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import REPO_ROOT

VARIANTS = ("builtin", "ours", "obey-false")
COMMON_SETTINGS: dict[str, Any] = {
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    "DOWNLOAD_TIMEOUT": 30,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "TELNETCONSOLE_ENABLED": False,
    "TWISTED_DNS_RESOLVER": "sites.LoopbackResolver",
}
HREF = re.compile(rb'href="([^"]+)"')
"""The links of a page of ``sites.py`` (a spider follows them without parsing HTML)."""


def variant_settings(variant: str) -> dict[str, Any]:
    """The settings of a variant: :data:`COMMON_SETTINGS` plus who obeys robots.txt."""
    settings = dict(COMMON_SETTINGS)
    settings["ROBOTSTXT_OBEY"] = variant != "obey-false"
    if variant == "ours":
        settings["ADDONS"] = {"scrapy_robotrules.Addon": 0}
    return settings


def max_rss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


def cpu_seconds() -> float:
    """CPU time (user + system) this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_worker(
    script: str | Path, args: Sequence[str], timeout: float
) -> tuple[dict[str, Any] | None, str]:
    """Run ``python script --worker args``; (its last stdout line as JSON, or None; why/stderr)."""
    cmd = [sys.executable, str(Path(script).resolve()), "--worker", *args]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT, check=False
        )
    except subprocess.TimeoutExpired:
        return None, f"killed after {timeout:.0f} s"
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        return None, f"exit status {proc.returncode}\n{tail}"
    answer: dict[str, Any] = json.loads(lines[-1])
    return answer, proc.stderr
