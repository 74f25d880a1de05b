"""The real-world corpus: every file parses, every URL gets a decision (SPEC 1).

The files are the repository's part of the corpus (``tests/data/corpus.tar.gz``,
built by ``tests/helpers/corpus_subset.py``; see ``tests/data/README.rst``). A missing
or damaged archive fails these tests; it never skips them.
"""

from __future__ import annotations

import csv

import pytest

from scrapy_robotrules import Precedence, RobotsTxt
from tests.helpers.corpus_subset import FILES, TAGS, Subset, choose, load, read_tsv
from tests.helpers.vectors import shared_dir

MODES: tuple[Precedence, ...] = ("most-specific", "first-match", "allow-first")
URLS_PER_FILE = 50


@pytest.fixture(scope="module")
def subset() -> Subset:
    return load()


@pytest.fixture(scope="module")
def parsed(subset: Subset) -> dict[str, RobotsTxt]:
    return {
        name: RobotsTxt.parse(body, f"https://{name[:-4]}/robots.txt")
        for name, body in subset.files.items()
    }


def test_the_subset_is_whole(subset: Subset) -> None:
    assert len(subset.files) == FILES
    assert sorted(row["file"] for row in subset.manifest) == list(subset.files)
    for row in subset.manifest:
        assert len(subset.files[row["file"]]) == int(row["size_bytes"]), row["file"]
        assert row["source_repo"].count("/") == 1, row
    tags = {tag for row in subset.manifest for tag in row["tags"].split(",") if tag}
    assert tags == set(TAGS)
    # Large files and tiny ones: the 1.37 MB file, the 853 KB one, empty files.
    sizes = sorted(len(body) for body in subset.files.values())
    assert sizes[0] == 0
    assert sizes[-1] > 1_000_000
    assert sum(size > 100_000 for size in sizes) >= 30
    by_file = subset.urls_by_file()
    assert all(len(urls) == URLS_PER_FILE for urls in by_file.values())
    assert len(subset.urls) == FILES * URLS_PER_FILE


def test_the_subset_is_the_shared_corpus_part(subset: Subset) -> None:
    corpus = shared_dir() / "corpus"
    if not shared_dir().is_dir():
        pytest.skip(f"no shared directory beside the repository ({shared_dir().name}/)")
    manifest = read_tsv((corpus / "MANIFEST.tsv").read_text(encoding="utf-8"))
    # What tests/helpers/corpus_subset.py would choose today, byte for byte the same files.
    assert choose(manifest) == set(subset.files)
    assert subset.manifest == [row for row in manifest if row["file"] in subset.files]
    for name, body in subset.files.items():
        assert (corpus / "robots" / name).read_bytes() == body, name
    with open(corpus / "urls.tsv", encoding="utf-8", newline="") as handle:
        urls = [
            (row["file"], row["url"])
            for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            if row["file"] in subset.files
        ]
    assert urls == subset.urls


def test_every_file_parses(parsed: dict[str, RobotsTxt]) -> None:
    assert len(parsed) == FILES
    for name, robots in parsed.items():
        # Touch everything a file offers; nothing may raise.
        assert isinstance(robots.sitemaps, list), name
        assert robots.unknown_lines >= 0, name
        for agent in ("examplebot", "Googlebot"):
            robots.crawl_delay(agent)
            robots.request_rate(agent)
            robots.visit_time(agent)
    # The 853 KB file and the 1.37 MB one are cut at the limit.
    assert parsed["docs.oracle.com.txt"].truncated
    assert parsed["www.hermes.com.txt"].truncated


def test_every_url_gets_a_decision_in_every_mode(
    subset: Subset, parsed: dict[str, RobotsTxt]
) -> None:
    decided = disallowed = 0
    for name, urls in subset.urls_by_file().items():
        robots = parsed[name]
        for url in urls:
            for agent in ("examplebot", "Googlebot"):
                answers = {robots.allowed(url, agent, mode) for mode in MODES}
                decided += 1
                disallowed += False in answers
    assert decided == 2 * FILES * URLS_PER_FILE
    # The URLs are built from the files' own rules: many must be disallowed.
    assert disallowed > decided // 6


def test_explain_agrees_with_allowed_on_the_corpus(
    subset: Subset, parsed: dict[str, RobotsTxt]
) -> None:
    for name, urls in subset.urls_by_file().items():
        robots = parsed[name]
        for url in urls[::10]:
            for mode in MODES:
                decision = robots.explain(url, "Googlebot", mode)
                assert decision.allowed == robots.allowed(url, "Googlebot", mode)
                if decision.rule is not None:
                    assert decision.rule.allow == decision.allowed
