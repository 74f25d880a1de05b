"""The page-level rules engine, one test per rule of the protocol.

Section names refer to Google's "Robots meta tag, data-nosnippet, and
X-Robots-Tag specifications" (Search Central documentation).
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robotrules.engine.page.directives import (
    HEADER,
    MAX_ITEMS,
    MAX_KEPT,
    MAX_VALUE_CHARS,
    META,
    PageDirectives,
    parse_date,
    parse_page_directives,
)
from scrapy_robotrules.engine.page.html import head_metas

AGENT = "ExampleBot/1.2 (+https://example.com/bot)"
UTC = timezone.utc


def header(*values: str, agent: str = AGENT) -> PageDirectives:
    return parse_page_directives(values, (), agent)


def meta(*pairs: tuple[str, str], agent: str = AGENT) -> PageDirectives:
    return parse_page_directives((), pairs, agent)


# "Using the X-Robots-Tag HTTP header"


def test_header_rule_applies_to_every_crawler() -> None:
    page = header("noindex")
    assert page.noindex
    assert not page.nofollow
    assert page.sources("noindex")[0].source.kind == HEADER


def test_comma_separated_list() -> None:
    page = header("noarchive, nosnippet")
    assert page.restrictions == {"noarchive", "nosnippet"}


def test_several_headers_are_combined() -> None:
    page = header("noarchive", "unavailable_after: 25 Jun 2010 15:00:00 PST")
    assert "noarchive" in page.restrictions
    assert page.unavailable_after == datetime(2010, 6, 25, 23, 0, tzinfo=UTC)


def test_header_prefix_names_a_crawler() -> None:
    page = header("examplebot: nofollow", "otherbot: noindex, nofollow")
    assert page.nofollow
    assert not page.noindex
    assert [str(d.name) for d in page.other_crawlers] == ["noindex", "nofollow"]
    assert {d.scope for d in page.other_crawlers} == {"otherbot"}


def test_prefix_scope_runs_to_the_next_prefix() -> None:
    page = header("otherbot: noindex, examplebot: nofollow, noarchive")
    assert page.restrictions == {"nofollow", "noarchive"}
    assert [d.name for d in page.other_crawlers] == ["noindex"]


def test_prefix_matched_on_product_token_case_insensitively() -> None:
    assert header("EXAMPLEBOT/2.0: noindex").noindex
    assert not header("examplebot-news: noindex").noindex
    assert not header("example: noindex").noindex


def test_prefix_substring_matching_when_chosen() -> None:
    page = parse_page_directives(["example: noindex"], (), AGENT, "substring")
    assert page.noindex


def test_prefix_before_a_valued_rule() -> None:
    page = header("examplebot: unavailable_after: 2020-09-21")
    assert page.unavailable_after == datetime(2020, 9, 21, tzinfo=UTC)


def test_bytes_header_values() -> None:
    assert header(b"noindex".decode()).noindex
    assert parse_page_directives([b"NoIndex"], (), AGENT).noindex


# "Using the robots meta tag"


def test_meta_robots_applies_to_every_crawler() -> None:
    page = meta(("robots", "noindex"))
    assert page.noindex
    assert page.sources("noindex")[0].source.kind == META


def test_meta_name_and_content_are_case_insensitive() -> None:
    assert meta(("ROBOTS", "NOINDEX")).noindex
    assert meta(("ExampleBot", "NoFollow")).nofollow


def test_meta_named_after_this_crawler() -> None:
    page = meta(("examplebot", "nofollow"), ("otherbot", "noindex"))
    assert page.restrictions == {"nofollow"}
    assert [(d.scope, d.name) for d in page.other_crawlers] == [("otherbot", "noindex")]


def test_meta_of_other_kinds_are_not_rules() -> None:
    page = meta(("description", "A page about noindex"), ("viewport", "width=device-width"))
    assert page == PageDirectives(agent="examplebot")


def test_several_meta_tags_are_combined() -> None:
    page = meta(("robots", "noarchive"), ("examplebot", "nosnippet"))
    assert page.restrictions == {"noarchive", "nosnippet"}


def test_header_and_meta_are_combined() -> None:
    page = parse_page_directives(["noindex"], [("robots", "nofollow")], AGENT)
    assert page.restrictions == {"noindex", "nofollow"}


# "Valid indexing and serving rules"


def test_none_means_noindex_nofollow() -> None:
    page = header("none")
    assert page.restrictions == {"noindex", "nofollow"}
    assert page.sources("noindex")[0].name == "none"


def test_all_restricts_nothing() -> None:
    page = header("all")
    assert page.restrictions == frozenset()
    assert page.in_effect == ()
    assert any(line.startswith("no effect: all") for line in page.explain())


@pytest.mark.parametrize(
    "rule",
    ["noarchive", "nosnippet", "noimageindex", "noai", "noimageai", "notranslate"],
)
def test_other_restrictions_kept_as_data(rule: str) -> None:
    assert header(rule).restrictions == {rule}


def test_indexifembedded_kept() -> None:
    page = header("noindex, indexifembedded")
    assert page.restrictions == {"noindex", "indexifembedded"}


def test_max_values_kept() -> None:
    page = header("max-snippet: 20, max-image-preview:standard, max-video-preview:-1")
    assert (page.max_snippet, page.max_image_preview, page.max_video_preview) == (
        20,
        "standard",
        -1,
    )
    assert page.in_effect == ("max-snippet", "max-image-preview", "max-video-preview")


def test_unknown_rules_are_kept_and_reported() -> None:
    page = header("noindex, nocache, future-rule: 3")
    assert page.noindex
    assert [(d.name, d.value) for d in page.unknown] == [("nocache", None), ("future-rule", "3")]
    assert any(line.startswith("unknown, no effect: nocache") for line in page.explain())


def test_malformed_values_are_ignored_and_reported() -> None:
    page = header(
        "max-snippet: lots, max-image-preview: huge, max-video-preview: -7, unavailable_after: soon"
    )
    assert page.in_effect == ()
    assert [d.name for d in page.malformed] == [
        "max-snippet",
        "max-image-preview",
        "max-video-preview",
        "unavailable_after",
    ]


def test_empty_and_blank_items_are_nothing() -> None:
    assert header("", " , ,,", ":") == PageDirectives(agent="examplebot")


# unavailable_after: "a widely adopted format including, but not limited to
# RFC 822, RFC 850, and ISO 8601. The rule is ignored if no valid date/time".


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tue, 25 May 2010 21:42:43 GMT", datetime(2010, 5, 25, 21, 42, 43, tzinfo=UTC)),
        ("25 Jun 2010 15:00:00 PST", datetime(2010, 6, 25, 23, 0, tzinfo=UTC)),
        ("Tuesday, 25-May-10 21:42:43 GMT", datetime(2010, 5, 25, 21, 42, 43, tzinfo=UTC)),
        ("23-Jul-2007 18:00:00 EST", datetime(2007, 7, 23, 23, 0, tzinfo=UTC)),
        ("25 Jun 2010 15:00:00 +0200", datetime(2010, 6, 25, 13, 0, tzinfo=UTC)),
        ("25 Jun 2010", datetime(2010, 6, 25, tzinfo=UTC)),
        ("2020-09-21", datetime(2020, 9, 21, tzinfo=UTC)),
        ("2026-12-31T23:59:59Z", datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)),
        ("2026-12-31T23:59:59-02:00", datetime(2027, 1, 1, 1, 59, 59, tzinfo=UTC)),
        ("2026-12-31 10:00", datetime(2026, 12, 31, 10, 0, tzinfo=UTC)),
    ],
)
def test_unavailable_after_date_formats(text: str, expected: datetime) -> None:
    assert parse_date(text) == expected


@pytest.mark.parametrize(
    "text", ["", "soon", "2020-13-45", "32 Foo 2010", "9" * 80, "31 Feb 2010 10:00:00 GMT"]
)
def test_not_a_date(text: str) -> None:
    assert parse_date(text) is None


def test_weekday_comma_inside_a_date_is_not_a_separator() -> None:
    page = header("unavailable_after: Tue, 25 May 2010 21:42:43 GMT, noarchive")
    assert page.unavailable_after == datetime(2010, 5, 25, 21, 42, 43, tzinfo=UTC)
    assert page.restrictions == {"noarchive"}


def test_unavailable_after_past_and_future() -> None:
    now = datetime(2024, 1, 1, tzinfo=UTC)
    past = header("unavailable_after: 2001-01-01")
    future = header("unavailable_after: 2999-01-01")
    assert past.expired(now)
    assert past.excluded(now)
    assert not past.noindex
    assert not future.expired(now)
    assert not future.excluded(now)
    assert "(passed)" in past.explain(now)[0]
    assert "(not yet)" in future.explain(now)[0]


# "Handling combined indexing and serving rules": the more restrictive applies.


def test_noindex_beats_index() -> None:
    page = parse_page_directives(["index, follow"], [("examplebot", "noindex")], AGENT)
    assert page.noindex
    assert not page.nofollow
    assert any("overridden by noindex" in line and "index" in line for line in page.explain())


def test_nofollow_beats_all() -> None:
    page = meta(("robots", "all"), ("robots", "nofollow"))
    assert page.nofollow


def test_nosnippet_beats_max_snippet() -> None:
    page = header("max-snippet: 50", "nosnippet")
    assert page.max_snippet == 0


def test_smallest_limits_win() -> None:
    page = header(
        "max-snippet: -1, max-snippet: 40, max-snippet: 120",
        "max-image-preview: large, max-image-preview: none",
        "max-video-preview: -1",
        "max-video-preview: 30",
    )
    assert (page.max_snippet, page.max_image_preview, page.max_video_preview) == (
        40,
        "none",
        30,
    )
    assert header("max-snippet: -1").max_snippet == -1


def test_earliest_unavailable_after_wins() -> None:
    page = parse_page_directives(
        ["unavailable_after: 2030-01-01"], [("robots", "unavailable_after: 2029-06-01")], AGENT
    )
    assert page.unavailable_after == datetime(2029, 6, 1, tzinfo=UTC)


def test_generic_and_specific_both_apply() -> None:
    page = parse_page_directives(["noarchive"], [("examplebot", "noindex")], AGENT)
    assert page.restrictions == {"noarchive", "noindex"}


# Explanations


def test_explain_names_each_source() -> None:
    page = parse_page_directives(
        ["examplebot: noindex", "otherbot: nofollow"], [("robots", "nofollow")], AGENT
    )
    lines = page.explain()
    assert lines[0] == (
        "noindex <- noindex (for examplebot; X-Robots-Tag header 1: 'examplebot: noindex')"
    )
    assert lines[1] == (
        "nofollow <- nofollow (for every crawler; <meta name=\"robots\"> 1: 'nofollow')"
    )
    assert lines[2].startswith("not for this crawler: nofollow (for otherbot")


# Hostile input: bounded work, never an exception


def test_huge_header_is_capped() -> None:
    # Work, not time: the parser keeps (and so reads past) no more than the cap.
    value = "noarchive, " + "x" * 10_000_000
    page = header(value)
    assert page.restrictions == {"noarchive"}
    assert len(page.unknown[0].source.value) == MAX_VALUE_CHARS


def test_many_items_are_capped() -> None:
    page = header(", ".join(["foo"] * (MAX_ITEMS + 10) + ["noindex"]))
    assert not page.noindex
    assert len(page.unknown) == MAX_ITEMS
    assert page.truncated
    assert any(line.startswith("not read: rules after") for line in page.explain())


def test_every_header_and_meta_is_read_and_what_is_kept_stays_bounded() -> None:
    page = parse_page_directives(
        ["noarchive"] * 999 + ["nofollow"],
        [("robots", "nosnippet")] * 999 + [("robots", "noindex")],
        AGENT,
    )
    assert page.restrictions == {"noarchive", "nosnippet", "nofollow", "noindex"}
    assert not page.truncated
    # The first rules, and past them only those that change what is in effect.
    assert len(page.applied) == MAX_KEPT + 3  # nosnippet, nofollow, noindex
    assert page.sources("nofollow")[0].source.number == 1000
    assert str(page.sources("noindex")[0]) == (
        "noindex (for every crawler; <meta name=\"robots\"> 1000: 'noindex')"
    )
    assert page.explain()[-1] == (
        f"read, not listed: {2000 - MAX_KEPT - 3:,} rules for this crawler that change"
        f" nothing in effect past the first {MAX_KEPT}"
    )


def test_past_the_kept_rules_the_most_restrictive_value_is_kept() -> None:
    values = [f"max-snippet: {n}" for n in range(2000, 999, -1)] + ["max-snippet: -1"]
    values += [f"otherbot: noindex, unknown-{n}" for n in range(1000)]
    page = header(*values)
    assert page.max_snippet == 1000
    assert [d.value for d in page.sources("max-snippet")][-1] == "1000"
    assert len(page.applied) == MAX_KEPT + 1
    assert (len(page.other_crawlers), len(page.unknown)) == (MAX_KEPT, 0)
    # Every value of more rules than are read is still named, a few of them.
    many = header(*[", ".join(["foo"] * (MAX_ITEMS + 1))] * 500)
    assert len(many.truncated) == MAX_KEPT + 1
    assert (
        many.truncated[-1] == f"rules after the first {MAX_ITEMS} of {500 - MAX_KEPT} more values"
    )


@pytest.mark.parametrize(
    "value",
    [
        "\x00\xff\ud800, noindex",
        "::::, noindex",
        "a: b: c: noindex",
        "unavailable_after:, noindex",
        "unavailable_after: Tue",
        "max-snippet: 99999999999999999999",
        ",,,",
    ],
)
def test_malformed_values_never_raise(value: str) -> None:
    page = header(value)
    assert isinstance(page.explain(), list)


def test_a_word_that_is_no_weekday_does_not_join_the_next_rule() -> None:
    page = header("unavailable_after: someday, noindex")
    assert page.noindex
    assert [d.value for d in page.malformed] == ["someday"]


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_dates_out_of_range_are_no_dates(text: str) -> None:
    assert parse_date(text) is None


_RULEISH = st.text(alphabet="noindexfollowa_ftr:;, -0123456789bot\t\"'<>=/", max_size=120)


@given(
    st.lists(st.one_of(_RULEISH, st.text(max_size=80)), max_size=6),
    st.lists(st.tuples(st.sampled_from(["robots", "examplebot", "x"]), _RULEISH), max_size=6),
    st.text(max_size=30),
)
@settings(max_examples=300, deadline=None)
def test_any_input_is_read_without_an_exception(
    headers: list[str], metas: list[tuple[str, str]], agent: str
) -> None:
    page = parse_page_directives(headers, metas, agent)
    assert isinstance(page.explain(), list)
    assert page.noindex == bool(page.sources("noindex"))


@given(st.binary(max_size=2000))
@settings(max_examples=300, deadline=None)
def test_any_bytes_are_scanned_without_an_exception(body: bytes) -> None:
    assert isinstance(head_metas(b"<head><meta name=robots " + body), list)
