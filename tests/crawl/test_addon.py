"""The add-on, enabling the components by hand, and what importing the package costs."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.settings import Settings
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

import scrapy_robotrules
from scrapy_robotrules import Addon, RobotRulesExtension, RobotRulesMiddleware
from tests.helpers.crawling import (
    CrawlResult,
    RecordingSpider,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply

CRAWL_TESTS = True

DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private\n"
BUILTIN_PATH = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


def component_list(settings: Settings, name: str) -> list[Any]:
    """The components of ``name`` (with its base) Scrapy enables, in order, as written."""
    # Scrapy 2.15.1+ merges by import path; 2.13 to 2.15.0 by key as written.
    merge = getattr(settings, "get_component_priority_dict_with_base", settings.getwithbase)
    return build_component_list(merge(name))


def components(settings: Settings, name: str) -> dict[Any, Any]:
    """The components of ``name`` Scrapy enables, by class, with their priority."""
    merge = getattr(settings, "get_component_priority_dict_with_base", settings.getwithbase)
    merged = merge(name)
    found = [load_object(key) for key in component_list(settings, name)]
    assert len(set(found)) == len(found), f"a component enabled twice: {found}"
    return {load_object(key): merged[key] for key in component_list(settings, name)}


def added(settings: dict[str, Any] | None = None) -> Settings:
    result = Settings()
    result.setdict(settings or {}, priority="project")
    Addon().update_settings(result)
    return result


def test_the_addon_swaps_the_builtin_for_the_middleware_and_enables_the_extension() -> None:
    settings = added()
    middlewares = components(settings, "DOWNLOADER_MIDDLEWARES")
    assert middlewares[RobotRulesMiddleware] == 100
    assert RobotsTxtMiddleware not in middlewares
    assert components(settings, "EXTENSIONS")[RobotRulesExtension] == 0
    names = [load_object(path) for path in component_list(settings, "DOWNLOADER_MIDDLEWARES")]
    # Where the built-in was: after OffsiteMiddleware, before the rest.
    assert names.index(RobotRulesMiddleware) == 1


def test_the_addon_keeps_what_the_project_set_for_its_classes() -> None:
    settings = added(
        {
            "DOWNLOADER_MIDDLEWARES": {"scrapy_robotrules.RobotRulesMiddleware": 543},
            "EXTENSIONS": {RobotRulesExtension: None},
        }
    )
    assert components(settings, "DOWNLOADER_MIDDLEWARES")[RobotRulesMiddleware] == 543
    assert RobotRulesExtension not in components(settings, "EXTENSIONS")
    assert RobotsTxtMiddleware not in components(settings, "DOWNLOADER_MIDDLEWARES")


def test_the_middleware_goes_where_the_project_moved_the_builtin() -> None:
    moved = {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": 650}
    settings = added({"DOWNLOADER_MIDDLEWARES": moved})
    middlewares = components(settings, "DOWNLOADER_MIDDLEWARES")
    assert middlewares[RobotRulesMiddleware] == 650
    assert RobotsTxtMiddleware not in middlewares


def test_the_addon_leaves_robotstxt_obey_to_the_project() -> None:
    assert added().getbool("ROBOTSTXT_OBEY") is False
    assert added({"ROBOTSTXT_OBEY": True}).getbool("ROBOTSTXT_OBEY") is True


def enabled(result: CrawlResult[Any]) -> tuple[list[type], list[type]]:
    engine = result.crawler.engine
    middlewares = [type(mw) for mw in engine.downloader.middleware.middlewares]
    extensions = [type(ext) for ext in result.crawler.extensions.middlewares]
    return middlewares, extensions


@async_test
async def test_a_crawl_with_the_addon_alone_obeys_robots_txt(mockserver: MockServer) -> None:
    mockserver.set_robots("site.test", Reply(body=DISALLOW_PRIVATE))
    urls = [mockserver.url("site.test", p) for p in ("/public", "/private")]
    settings = {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robotrules.Addon": 0}}
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]
    middlewares, extensions = enabled(result)
    assert RobotRulesMiddleware in middlewares
    assert RobotsTxtMiddleware not in middlewares
    assert RobotRulesExtension in extensions
    # One fetch: the built-in is off. Its robotstxt/* stats are this package's count.
    assert len(mockserver.requests_for("site.test", "/robots.txt")) == 1
    assert result.stats["robotstxt/request_count"] == 1
    assert result.stats["robotrules/request_count"] == 1


@async_test
async def test_the_components_enabled_by_hand_obey_robots_txt(mockserver: MockServer) -> None:
    mockserver.set_robots("site.test", Reply(body=DISALLOW_PRIVATE))
    urls = [mockserver.url("site.test", p) for p in ("/public", "/private")]
    settings = {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "scrapy_robotrules.RobotRulesMiddleware": 100,
        },
        "EXTENSIONS": {"scrapy_robotrules.RobotRulesExtension": 0},
    }
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == [urls[0]]
    middlewares, extensions = enabled(result)
    assert (RobotRulesMiddleware in middlewares, RobotsTxtMiddleware in middlewares) == (
        True,
        False,
    )
    assert RobotRulesExtension in extensions
    assert result.messages("robots.txt: files kept for 1 origin, 1 fetch (1 request)")


@async_test
async def test_the_builtin_left_on_beside_the_middleware_fetches_nothing(
    mockserver: MockServer,
) -> None:
    # Enabled by hand, as a newcomer would: the built-in stays on (ROBOTSTXT_OBEY).
    mockserver.set_robots("site.test", Reply(body=DISALLOW_PRIVATE))
    urls = [mockserver.url("site.test", p) for p in ("/public", "/private", "/more")]
    settings = {
        "ADDONS": {},
        "ROBOTSTXT_OBEY": True,
        "DOWNLOADER_MIDDLEWARES": {"scrapy_robotrules.RobotRulesMiddleware": 100},
    }
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    middlewares, _ = enabled(result)
    assert RobotsTxtMiddleware in middlewares
    assert sorted(result.crawled) == sorted([urls[0], urls[2]])
    assert result.ignored == [urls[1]]
    # One fetch at the site, one count in each family, one decision.
    assert len(mockserver.requests_for("site.test", "/robots.txt")) == 1
    assert result.stats["robotstxt/request_count"] == 1
    assert result.stats["robotrules/request_count"] == 1
    assert result.stats["robotstxt/forbidden"] == 1
    assert result.messages(level=logging.ERROR) == []
    assert result.messages("RobotsTxtMiddleware is enabled beside", logging.WARNING) == [
        "Scrapy's RobotsTxtMiddleware is enabled beside scrapy_robotrules.RobotRulesMiddleware:"
        " its robots.txt requests are refused here (robots.txt is fetched once, by this"
        " package, which decides alone). Switch it off: DOWNLOADER_MIDDLEWARES ="
        ' {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None}'
    ]


@async_test
async def test_the_middleware_alone_obeys_robots_txt(mockserver: MockServer) -> None:
    mockserver.set_robots("site.test", Reply(body=DISALLOW_PRIVATE))
    urls = [mockserver.url("site.test", p) for p in ("/public", "/private")]
    settings = {
        "ROBOTSTXT_OBEY": True,
        # By its path: Scrapy before 2.15.1 keeps the base's path key enabled
        # beside a class key set to None (docs/compatibility.rst).
        "DOWNLOADER_MIDDLEWARES": {BUILTIN_PATH: None, RobotRulesMiddleware: 100},
    }
    result = await run_spider(RecordingSpider, settings, start_urls=urls)
    assert result.crawled == [urls[0]]
    assert result.ignored == [urls[1]]
    middlewares, _ = enabled(result)
    assert RobotsTxtMiddleware not in middlewares
    assert RobotRulesMiddleware in middlewares


@async_test
async def test_with_robotstxt_obey_off_the_addon_does_nothing(mockserver: MockServer) -> None:
    mockserver.set_robots("site.test", Reply(body=b"User-agent: *\nDisallow: /\n"))
    url = mockserver.url("site.test", "/page")
    settings = {"ROBOTSTXT_OBEY": False, "ADDONS": {"scrapy_robotrules.Addon": 0}}
    result = await run_spider(RecordingSpider, settings, start_urls=[url])
    assert result.crawled == [url]
    middlewares, extensions = enabled(result)
    assert RobotRulesMiddleware not in middlewares
    assert RobotRulesExtension not in extensions
    assert mockserver.requests_for("site.test", "/robots.txt") == []


def test_importing_the_engine_imports_neither_scrapy_nor_twisted() -> None:
    code = (
        "import sys, scrapy_robotrules\n"
        "from scrapy_robotrules import RobotRules, RobotsTxt, Decision, Outcome\n"
        "assert 'scrapy' not in sys.modules, 'scrapy'\n"
        "assert 'twisted' not in sys.modules, 'twisted'\n"
        "scrapy_robotrules.Addon\n"
        "assert 'scrapy' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(_root()))


def _root() -> Path:
    return Path(scrapy_robotrules.__file__).resolve().parent.parent


SCRAPY_NAMES = (
    "Addon",
    "PageDirectivesMiddleware",
    "RobotParser",
    "RobotRulesExtension",
    "RobotRulesMiddleware",
    "RobotRulesSettingError",
    "RobotsBodyMiddleware",
    "RobotsTxtForbidden",
    "RobotsTxtNotFetched",
    "RobotsTxtUnreachable",
    "UsagePreferencesMiddleware",
)
"""The crawl-layer names the docs tell users to import from the package itself."""


def test_the_scrapy_names_are_loaded_on_first_access() -> None:
    for name in SCRAPY_NAMES:
        assert name in dir(scrapy_robotrules)
        assert getattr(scrapy_robotrules, name).__name__ == name
    assert "robotrules_fetched" in dir(scrapy_robotrules)
    from scrapy_robotrules.crawl.signals import robotrules_fetched

    assert scrapy_robotrules.robotrules_fetched is robotrules_fetched
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        scrapy_robotrules.Nothing  # noqa: B018
