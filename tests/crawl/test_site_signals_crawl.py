"""Usage signals as sites write them, and RSL licences, in real crawls against the local server.

Conflicting ``Content-Usage`` rules (a refusal wins), each ``Content-Signal``
form (``allow``/``disallow``, ``use``, ``Content-Signals``, a line before any
group, a line in another crawler's group, the response header, singular and
plural), and a ``License`` line carried to the view, the item marks, the
refusal reasons and the audit trail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.crawling import (
    CrawlResult,
    async_test,
    mockserver_fixture,  # noqa: F401  (the ``mockserver`` fixture)
    run_spider,
)
from tests.helpers.mockserver import MockServer, Reply
from tests.helpers.usage import HTML, SETTINGS, UsageSpider, html

CRAWL_TESTS = True

HOST = "signals.test"
LICENSE = "https://signals.test/license.xml"
ROBOTS = f"""\
Content-Signal: search=yes, ai-input=no
License: {LICENSE}

User-agent: *
Allow: /
Disallow: /never/
Content-Usage: /news/ train-ai=y
Content-Usage: /news/ train-ai=n
Content-Usage: /news/open/ train-ai=y, bots=n
Content-Signals: /plural/ ai-train=disallow, use=reference
Content-Signal: /loose/ Search=Allow, ai-train=maybe
""".encode()

PAGES: dict[str, Reply] = {
    "/page": Reply(body=html(), headers=HTML),
    "/never/x": Reply(body=html(), headers=HTML),
    "/news/x": Reply(body=html(), headers=HTML),
    "/news/open/x": Reply(body=html(), headers=HTML),
    "/plural/x": Reply(body=html(), headers=HTML),
    "/loose/x": Reply(body=html(), headers=HTML),
    "/header": Reply(body=html(), headers={**HTML, "Content-Signal": "ai-train=disallow"}),
    "/header-plural": Reply(
        body=html(), headers={**HTML, "Content-Signals": "ai-train=no, use=immediate"}
    ),
}

# Another crawler's group says no; the crawler's own group (ExampleBot) says no elsewhere.
OTHERS = {
    "grouped.test": b"User-agent: otherbot\nAllow: /\nContent-Signal: ai-train=no\n\n"
    b"User-agent: *\nAllow: /\n",
    "own.test": b"User-agent: otherbot\nAllow: /\n\n"
    b"User-agent: ExampleBot\nAllow: /\nContent-Signal: ai-train=no\n",
    # No signal in robots.txt: only the page's plural header says anything.
    "quiet.test": b"User-agent: *\nDisallow: /never/\n",
    # A licence and no usage line: the view still names it.
    "licensed.test": b"User-agent: *\nDisallow: /never/\nLicense: /rsl.xml\n",
}
"""Host -> robots.txt; each serves one page, ``/<its first label>``."""
QUIET_HEADERS = {**HTML, "Content-Signals": "ai-train=disallow"}


async def crawl(mockserver: MockServer, settings: dict[str, Any]) -> CrawlResult[UsageSpider]:
    mockserver.set_robots(HOST, Reply(body=ROBOTS))
    for path, reply in PAGES.items():
        mockserver.set_page(HOST, path, reply)
    urls = [mockserver.url(HOST, path) for path in PAGES]
    for host, robots in OTHERS.items():
        mockserver.set_robots(host, Reply(body=robots))
        path = "/" + host.partition(".")[0]
        headers = QUIET_HEADERS if host == "quiet.test" else HTML
        mockserver.set_page(host, path, Reply(body=html(), headers=headers))
        urls.append(mockserver.url(host, path))
    return await run_spider(UsageSpider, {**SETTINGS, **settings}, start_urls=urls)


def fetched(mockserver: MockServer, path: str, host: str = HOST) -> bool:
    return bool(mockserver.requests_for(host, path))


@async_test
async def test_each_form_read_in_a_crawl_that_only_records(mockserver: MockServer) -> None:
    result = await crawl(mockserver, {})
    views = result.spider.views
    assert not fetched(mockserver, "/never/x")
    # The line before any group applies to this crawler too.
    page = views["/page"]
    assert (page.state("search"), page.state("ai-input")) == ("allowed", "disallowed")
    assert page.explain()[1] == (
        "search: allowed <- robots.txt line 1: Content-Signal: search=yes, ai-input=no"
    )
    # Content-Usage for one path said both ways: the refusal wins; a longer path decides.
    assert views["/news/x"].state("train-ai") == "disallowed"
    assert views["/news/x"].explain()[0] == (
        "train-ai: disallowed <- robots.txt line 8: Content-Usage: /news/ train-ai=n"
    )
    news_open = views["/news/open/x"]
    assert news_open.state("train-ai") == "allowed"
    assert news_open.statements[0].data == (("bots", "n"),)
    # The plural, with disallow and use.
    plural = views["/plural/x"]
    assert plural.state("train-ai") == "disallowed"
    assert plural.statements[0].data == (("use", "reference"),)
    assert plural.explain()[0].startswith(
        "train-ai: disallowed <- robots.txt line 10: Content-Signals"
    )
    # What cannot be read is reported, never consent.
    loose = views["/loose/x"]
    assert (loose.state("search"), loose.state("train-ai")) == ("allowed", "unknown")
    assert "unknown, no effect: ai-train=maybe" in "\n".join(loose.explain())
    # Response headers, singular and plural.
    assert views["/header"].state("train-ai") == "disallowed"
    assert views["/header-plural"].explain()[0] == (
        "train-ai: disallowed <- Content-Signals header 1: 'ai-train=no, use=immediate'"
    )
    # Groups: another crawler's line does not apply; the crawler's own does.
    assert views["/grouped"].state("train-ai") == "unknown"
    assert views["/own"].state("train-ai") == "disallowed"
    assert views["/quiet"].explain()[0] == (
        "train-ai: disallowed <- Content-Signals header 1: 'ai-train=disallow'"
    )
    licensed = views["/licensed"]
    assert [str(lic) for lic in licensed.licenses] == [
        f"robots.txt line 3: License: {mockserver.url('licensed.test', '/rsl.xml')}"
    ]
    # The licence is in every view of the origin.
    assert [lic.url for lic in page.licenses] == [LICENSE]
    assert f"licence, not enforced (RSL 1.0): robots.txt line 2: License: {LICENSE}" in (
        page.explain()
    )
    stats = result.stats
    assert stats["robotrules/usage/unknown"] >= 1
    assert stats["robotrules/usage/licensed"] == len(PAGES) - 1 + 1  # and /licensed


@async_test
async def test_refusals_drop_or_mark_and_name_the_licence(
    mockserver: MockServer, tmp_path: Path
) -> None:
    trail = tmp_path / "audit.jsonl"
    result = await crawl(
        mockserver, {"ROBOTRULES_PURPOSES": ["train-ai"], "ROBOTRULES_AUDIT": str(trail)}
    )
    # robots.txt refuses: dropped before download (conflict, plural, own group).
    assert not fetched(mockserver, "/news/x")
    assert not fetched(mockserver, "/plural/x")
    assert not fetched(mockserver, "/own", "own.test")
    # Unknown is no refusal; another crawler's group is not ours.
    assert fetched(mockserver, "/loose/x")
    assert fetched(mockserver, "/news/open/x")
    assert fetched(mockserver, "/grouped", "grouped.test")
    assert result.stats["robotrules/usage/forbidden"] == 3
    # Only the response says so: its items are marked, the licence named in the mark.
    marks = {item["url"]: item.get("robotrules_usage_refused") for item in result.spider.items}
    assert marks["/header"] == (
        "train-ai: disallowed <- Content-Signal header 1: 'ai-train=disallow';"
        f" robots.txt line 2: License: {LICENSE}"
    )
    assert str(marks["/header-plural"]).startswith(
        "train-ai: disallowed <- Content-Signals header 1"
    )
    assert marks["/page"] is None
    assert (
        marks["/quiet"] == "train-ai: disallowed <- Content-Signals header 1: 'ai-train=disallow'"
    )
    # The audit trail: the origin's fetch line lists its licence; refusals name it.
    lines = [json.loads(line) for line in trail.read_text("ascii").splitlines()]
    fetches = {
        line["origin"].split("//")[1].split(":")[0]: line
        for line in lines
        if line["event"] == "fetch"
    }
    assert fetches[HOST]["licenses"] == [LICENSE]
    assert fetches["own.test"]["licenses"] == []
    refused = [
        line for line in lines if line["event"] == "request" and line["url"].endswith("/news/x")
    ]
    assert refused[0]["decision"] == "forbidden"
    assert refused[0]["reason"].endswith(f"robots.txt line 2: License: {LICENSE}")
