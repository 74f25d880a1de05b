"""Checks and first checks on ordinary files do little Python work (issue 12, section 3).

The work is counted, not timed: the Python functions a check or a file's
first check enters (``sys.setprofile`` sees every Python call), so a return
to a helper called per bucket, per rule or per line shows as a failure.
The decisions themselves are the differential and conformance tests' to check.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.precedence import MOST_SPECIFIC, PRECEDENCE_MODES


def python_calls(call: Callable[[], Any]) -> list[str]:
    """Names of the Python functions entered while ``call`` runs, in order."""
    entered: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            entered.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return entered[1:]  # the first is call itself


WILD = (
    "User-agent: *\n"
    "Disallow: /a\n"
    "Allow: /a/b/*.html$\n"
    "Disallow: /a/b/c*x\n"
    "Disallow: /a/*?\n"
    "Disallow: /*.php$\n"
    "Disallow: /*session\n"
    "Disallow: /q*\n"
)


def test_wildcard_buckets_are_walked_without_a_call_per_bucket() -> None:
    # Four buckets apply to the path ("", "/a/", "/a/b/", "/a/b/c"): the scan
    # walks them and their rows inline.
    for mode in PRECEDENCE_MODES:
        index = RobotsTxt.parse(WILD)._index("bot", mode, "token")
        assert index._wild is not None
        for path in ("/a/b/cd.html", "/a/b/cx", "/a/b/c.php?session", "/z"):
            calls = python_calls(functools.partial(index.decide, path))
            assert calls[calls.index("scan") + 1 :] == [], (mode, path, calls)


def test_wildcard_buckets_decide_as_the_patterns_do() -> None:
    robots = RobotsTxt.parse(WILD)
    expected = {
        "/a/b/cd.html": True,
        "/a/b/cx": False,
        "/a/b/c.php": False,
        "/a/b/x.html": True,
        "/a/b/x.html?": False,
        "/a/x?": False,
        "/b/session": False,
        "/q": False,
        "/z": True,
    }
    for path, allowed in expected.items():
        assert robots.allowed(path, "bot", MOST_SPECIFIC) is allowed, path
