"""The real-world corpus: every file parses, every URL gets a decision (SPEC 1, issue 2)."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest
from vectors import shared_dir

from scrapy_robotrules import RobotsTxt

CORPUS = shared_dir() / "corpus"
MODES = ("most-specific", "first-match", "allow-first")


def corpus_files() -> list[Path]:
    files = sorted((CORPUS / "robots").iterdir())
    assert len(files) == 3000, "the shared corpus is missing or incomplete"
    return files


def corpus_urls() -> dict[str, list[str]]:
    by_file: dict[str, list[str]] = defaultdict(list)
    with open(CORPUS / "urls.tsv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            by_file[row["file"]].append(row["url"])
    assert sum(map(len, by_file.values())) == 150_000
    return by_file


@pytest.fixture(scope="module")
def parsed() -> dict[str, RobotsTxt]:
    return {
        path.name: RobotsTxt.parse(path.read_bytes(), f"https://{path.name[:-4]}/robots.txt")
        for path in corpus_files()
    }


def test_every_file_parses(parsed: dict[str, RobotsTxt]) -> None:
    assert len(parsed) == 3000
    for name, robots in parsed.items():
        # Touch everything a file offers; nothing may raise.
        assert isinstance(robots.sitemaps, list), name
        assert robots.unknown_lines >= 0, name
        for agent in ("examplebot", "Googlebot"):
            robots.crawl_delay(agent)
            robots.request_rate(agent)
            robots.visit_time(agent)
    assert (
        sum(1 for r in parsed.values() if r.truncated) >= 1
    )  # the 853 KB file and the 1.37 MB one


def test_every_url_gets_a_decision_in_every_mode(parsed: dict[str, RobotsTxt]) -> None:
    decided = disallowed = 0
    for name, urls in corpus_urls().items():
        robots = parsed[name]
        for url in urls:
            for agent in ("examplebot", "Googlebot"):
                answers = {robots.allowed(url, agent, mode) for mode in MODES}
                decided += 1
                disallowed += False in answers
    assert decided == 300_000
    # The URLs are built from the files' own rules: many must be disallowed.
    assert disallowed > 50_000


def test_explain_agrees_with_allowed_on_the_corpus(parsed: dict[str, RobotsTxt]) -> None:
    for name, urls in corpus_urls().items():
        robots = parsed[name]
        for url in urls[::10]:
            for mode in MODES:
                decision = robots.explain(url, "Googlebot", mode)
                assert decision.allowed == robots.allowed(url, "Googlebot", mode)
                if decision.rule is not None:
                    assert decision.rule.allow == decision.allowed
