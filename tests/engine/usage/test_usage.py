"""Usage preferences, from the texts: one test per rule, each with its section.

aipref vocab and attach: the drafts of ``AIPREF_DRAFTS`` (vocab -08, attach
-05); Content Signals:
draft-romm-aipref-contentsignals-00 (1 October 2025) and Cloudflare's policy
text; TDMRep: W3C Community Group final report (10 May 2024).
"""

from __future__ import annotations

import pytest

from scrapy_robotrules.engine.robots.robotstxt import RobotsTxt
from scrapy_robotrules.engine.usage.preferences import (
    ALLOWED,
    DISALLOWED,
    UNKNOWN,
    UsageView,
    aipref_preferences,
    content_signal_preferences,
    header_statements,
    nothing_said,
    parse_dictionary,
    read_headers,
    robots_statements,
    usage_view,
)
from scrapy_robotrules.engine.usage.tdmrep import MAX_RULES, TdmRep

ATTACH_EXAMPLE = """\
User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
"""


def view(robots: str, path: str, agent: str = "testbot", **kw: object) -> UsageView:
    parsed = RobotsTxt.parse(robots, "https://example.com/robots.txt")
    url = f"https://example.com{path}"
    statements, notes = robots_statements(parsed, parsed.explain(url, agent))
    return usage_view(url, statements, notes=notes, **kw)  # type: ignore[arg-type]


# aipref attach §3.4: the example file and its table of results.


@pytest.mark.parametrize(
    ("path", "train_ai"),
    [("/test", DISALLOWED), ("/never/test", UNKNOWN), ("/ai-ok/test", ALLOWED)],
)
def test_attach_example_table(path: str, train_ai: str) -> None:
    assert view(ATTACH_EXAMPLE, path).state("train-ai") == train_ai


def test_attach_example_named_crawler_uses_its_own_group() -> None:
    # §3.4: ExampleBot uses the second group only (RFC 9309 §2.2.1).
    found = view(ATTACH_EXAMPLE, "/test", agent="ExampleBot/2.0")
    assert found.state("train-ai") == ALLOWED
    assert found.preferences["train-ai"].sources[0].line == 9


def test_disallowed_path_has_no_preferences_and_says_why() -> None:
    # §3.1: "no preferences are implied for resources that are disallowed".
    found = view(ATTACH_EXAMPLE, "/never/test")
    assert found.statements == ()
    assert any("disallows /never/test" in note for note in found.notes)


def test_explanation_names_rule_and_line() -> None:
    found = view(ATTACH_EXAMPLE, "/ai-ok/x")
    assert str(found.preferences["train-ai"]) == (
        "train-ai: allowed <- robots.txt line 5: Content-Usage: /ai-ok/ train-ai=y"
    )


def test_rule_order_carries_no_meaning_and_interleaves() -> None:
    # §3.1: "The ordering of rules in a group carries no semantics."
    robots = (
        "User-agent: *\nContent-Usage: /a/ train-ai=y\nDisallow: /x\nContent-Usage: train-ai=n\n"
    )
    assert view(robots, "/a/1").state("train-ai") == ALLOWED
    assert view(robots, "/b").state("train-ai") == DISALLOWED


def test_rule_before_first_member_line_counts() -> None:
    # Cloudflare's managed file: the signal stands between User-agent and Allow.
    robots = "User-Agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n"
    found = view(robots, "/")
    assert (found.state("search"), found.state("train-ai")) == (ALLOWED, DISALLOWED)


def test_identical_paths_combine_most_restrictive() -> None:
    # attach §3.1 -> vocab §5.1: any "n" disallows.
    robots = (
        "User-agent: *\nContent-Usage: /p/ train-ai=y\nContent-Usage: /p/ train-ai=n, search=y\n"
    )
    found = view(robots, "/p/1")
    assert found.state("train-ai") == DISALLOWED
    assert found.state("search") == ALLOWED


def test_longest_path_counts_octets_of_encoded_path() -> None:
    # §3.1: length in bytes of the encoded path; %7E and ~ are the same path.
    robots = "User-agent: *\nContent-Usage: /%7Efred/ train-ai=n\nContent-Usage: /~fre train-ai=y\n"
    assert view(robots, "/~fred/a").state("train-ai") == DISALLOWED


def test_wildcards_and_anchor_as_for_allow_disallow() -> None:
    robots = "User-agent: *\nContent-Usage: /*.pdf$ train-ai=n\n"
    assert view(robots, "/a/b.pdf").state("train-ai") == DISALLOWED
    assert view(robots, "/a/b.pdf?x").state("train-ai") == UNKNOWN


def test_path_ends_at_blank_and_value_at_comment() -> None:
    # §3.2: a path ends before SP or HTAB; the value ends at "#".
    robots = "User-agent: *\nContent-Usage:\t/x/\ttrain-ai=n # not=this\n"
    found = view(robots, "/x/1")
    assert found.state("train-ai") == DISALLOWED
    assert found.statements[0].path == "/x/"


def test_value_not_starting_with_slash_has_no_path() -> None:
    # §3.2: "a rule value that starts with any other character indicates that the path is absent".
    robots = "User-agent: *\nContent-Usage: train-ai=n\n"
    assert view(robots, "/anything/at/all").state("train-ai") == DISALLOWED


def test_key_is_case_insensitive_and_blanks_ignored() -> None:
    # §3.2: blanks around the label and the colon are ignored.
    robots = "User-agent: *\n  CONTENT-usage  :  train-ai=n\n"
    assert view(robots, "/").state("train-ai") == DISALLOWED


def test_other_crawlers_groups_do_not_apply() -> None:
    robots = (
        "User-agent: otherbot\nAllow: /\nContent-Usage: train-ai=n\n\nUser-agent: *\nAllow: /\n"
    )
    assert view(robots, "/").state("train-ai") == UNKNOWN


def test_usage_line_does_not_end_a_run_of_user_agent_lines() -> None:
    # The project's grouping (SPEC 2): only Allow and Disallow end a run of
    # User-agent lines, so a group of only usage lines is shared with the next
    # User-agent line (attach §3 would make Content-Usage a rule: the usage guide says so).
    robots = "User-agent: otherbot\nContent-Usage: train-ai=n\n\nUser-agent: *\nAllow: /\n"
    assert view(robots, "/").state("train-ai") == DISALLOWED


def test_content_usage_outside_groups_is_ignored_and_reported() -> None:
    # attach §3: Content-Usage is a group rule; before any User-agent line it is in none.
    robots = "Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n"
    found = view(robots, "/")
    assert found.state("train-ai") == UNKNOWN
    assert any("belong to no group" in note for note in found.notes)


def test_unparsable_value_is_unknown_and_reported() -> None:
    # vocab §6.5.1: "If the parsing of the Dictionary fails, preferences are unknown."
    robots = "User-agent: *\nContent-Usage: Train-AI=n\n"
    found = view(robots, "/")
    assert found.state("train-ai") == UNKNOWN
    assert found.statements[0].error.startswith("unparsable")


def test_unknown_tokens_are_kept() -> None:
    robots = "User-agent: *\nContent-Usage: train-ai=n, bots=n\n"
    found = view(robots, "/")
    assert found.statements[0].unknown == ("bots",)
    assert "unknown, no effect: bots" in found.explain()[4]


def test_file_with_no_usage_lines_costs_nothing() -> None:
    parsed = RobotsTxt.parse("User-agent: *\nDisallow: /x\n")
    assert parsed.usage_lines == ()


def test_usage_lines_are_bounded() -> None:
    from scrapy_robotrules.engine.robots.signal_lines import MAX_USAGE_LINES

    robots = "User-agent: *\n" + "Content-Usage: train-ai=n\n" * (MAX_USAGE_LINES + 10)
    assert len(RobotsTxt.parse(robots).usage_lines) == MAX_USAGE_LINES


# aipref vocab §6: the exemplary format, a structured-field dictionary.


def test_vocab_example() -> None:
    # §6: "train-ai=y, search=n".
    assert aipref_preferences("train-ai=y, search=n") == ({"train-ai": True, "search": False}, ())


def test_labels_are_case_sensitive() -> None:
    # §6.1 and §6.5.1: uppercase keys fail the parse.
    with pytest.raises(ValueError, match="key"):
        aipref_preferences("TRAIN-AI=n")


def test_values_other_than_y_n_tokens_are_unknown() -> None:
    # §6.5: "values that are not Tokens, and Token values that are other than y or n".
    prefs, unknown = aipref_preferences('train-ai="n", search=N')
    assert prefs == {}
    assert len(unknown) == 2


def test_last_duplicate_wins() -> None:
    # §6.5.1: "train-ai=y, train-ai, search=n, search="n"" -> all unknown.
    prefs, _ = aipref_preferences('train-ai=y, train-ai, search=n, search="n"')
    assert prefs == {}


def test_parameters_are_ignored() -> None:
    # §6.5.2: "train-ai;allow=n, train-ai=y" allows.
    assert aipref_preferences("train-ai;allow=n, train-ai=y")[0] == {"train-ai": True}
    assert aipref_preferences('train-ai;has;parameters="?"')[0] == {}


def test_unknown_labels_ignored() -> None:
    # §6.4: "any unknown labels MUST be ignored".
    assert aipref_preferences("future-use=n, train-ai=y") == ({"train-ai": True}, ("future-use",))


@pytest.mark.parametrize(
    "value",
    ["a=(1 2", "a=1,", "a=?2", 'a="\\x"', "a=1.2345", "a b", "a=1;", "é=y", "x" * 5000],
)
def test_invalid_dictionaries_raise_value_error_only(value: str) -> None:
    with pytest.raises(ValueError, match=r"\w"):
        parse_dictionary(value)


def test_every_item_type_parses() -> None:
    # RFC 9651 §3.3: integers, decimals, strings, tokens, byte sequences, booleans,
    # dates, display strings, inner lists.
    members = parse_dictionary(
        'a=1, b=-1.5, c="s\\"", d=t/1, e=:YQ==:, f=?0, g=@1, h=%"x", i=(1 a)'
    )
    assert list(members) == list("abcdefghi")


# Content Signals (Cloudflare's policy text; draft-romm-aipref-contentsignals-00).


def test_content_signal_three_signals() -> None:
    prefs, unknown = content_signal_preferences("search=yes, ai-input=yes, ai-train=no")
    assert prefs == {"search": True, "ai-input": True, "train-ai": False}
    assert unknown == ()


def test_content_signal_without_spaces_and_in_any_case() -> None:
    assert content_signal_preferences("Search=YES,ai-train=no")[0] == {
        "search": True,
        "train-ai": False,
    }


def test_content_signal_unknown_signals_kept() -> None:
    prefs, unknown = content_signal_preferences("search-ai=yes, ai-train=maybe")
    assert prefs == {}
    assert unknown == ("search-ai=yes", "ai-train=maybe")


def test_content_usage_and_signal_combine_most_restrictive() -> None:
    # vocab §5.1 across the two vocabularies.
    robots = "User-agent: *\nContent-Signal: ai-train=yes, search=yes\nContent-Usage: train-ai=n\n"
    found = view(robots, "/")
    assert found.state("train-ai") == DISALLOWED
    assert found.state("search") == ALLOWED


def test_each_kind_has_its_own_longest_match() -> None:
    robots = "User-agent: *\nContent-Signal: ai-train=no\nContent-Usage: /open/ search=y\n"
    found = view(robots, "/open/x")
    assert (found.state("train-ai"), found.state("search")) == (DISALLOWED, ALLOWED)


# Headers (attach §2; Content Signals).


def test_content_usage_header_lines_are_one_field() -> None:
    # RFC 9651 §4.2: several lines are joined with commas first.
    statements = header_statements(["train-ai=y", "train-ai=n"])
    assert len(statements) == 1
    assert statements[0].preferences == {"train-ai": False}


def test_every_header_line_is_read() -> None:
    # No line past a cap is dropped: with a refusal winning, a dropped
    # refusal would read as consent. The lines that decide are listed, the
    # others counted in a note.
    statements, notes = read_headers(["train-ai=y"] * 999 + ["train-ai=n"])
    found = usage_view("https://e.com/", statements, notes=notes)
    assert found.state("train-ai") == DISALLOWED
    assert found.explain() == [
        "train-ai: disallowed <- Content-Usage header 1000: 'train-ai=n'",
        "search: unknown",
        "ai-input: unknown",
        "tdm: unknown",
        "Content-Usage: 1000 header lines read as one field, a repeated key keeping its last"
        " value: 999 lines hold none that counts",
        "read as aipref draft-ietf-aipref-vocab-08, draft-ietf-aipref-attach-05",
    ]
    statements, notes = read_headers(content_signal=["ai-train=yes"] * 999 + ["ai-train=no"])
    found = usage_view("https://e.com/", statements, notes=notes)
    assert found.state("train-ai") == DISALLOWED
    assert found.explain() == [
        "train-ai: disallowed <- Content-Signal header 1000: 'ai-train=no'",
        "search: unknown",
        "ai-input: unknown",
        "tdm: unknown",
        "Content-Signal: 1000 header lines read; 998 say again what the lines listed say,"
        " and are not listed",
        "read as Cloudflare's Content Signals Policy (draft-romm-aipref-contentsignals-00)",
    ]


def test_the_lines_of_one_field_each_decide_their_keys() -> None:
    # RFC 9651 §4.2.2: a repeated key keeps its last value, wherever it is.
    statements = header_statements(["train-ai=n, search=y", "x=1", "train-ai=y"])
    assert [(s.line, s.preferences, s.unknown) for s in statements] == [
        (1, {"search": True}, ()),
        (2, {}, ("x",)),
        (3, {"train-ai": True}, ()),
    ]
    # One line that does not parse leaves the whole field unparsable.
    statements = header_statements(["train-ai=n"] * 50 + ["train-ai=n,,"])
    assert [(s.line, s.error) for s in statements] == [
        (51, "unparsable: a key must start with a-z or *")
    ]
    assert header_statements(["train-ai=n", ""])[0].error.endswith("an empty line among several")
    many = ", ".join(f"k{i}=y" for i in range(40))
    (statement,) = header_statements([many, many.replace("k", "j")])
    assert (statement.line, statement.error) == (2, "unparsable: more than 64 members")


def test_reading_header_lines_keeps_what_decides() -> None:
    # Work follows the bytes of the headers; what is kept does not.
    lines = [f"ai-train=yes, ai-input=no, x{i}" for i in range(5000)]
    statements, notes = read_headers(lines[:100], lines)
    assert len(statements) <= 4
    assert len(notes) == 2


def test_unparsable_header_is_unknown() -> None:
    # attach §2 / vocab §6.5.1.
    found = usage_view("https://e.com/", header_statements(["train-ai=n,,"]))
    assert found.state("train-ai") == UNKNOWN
    assert found.statements[0].error


def test_header_and_robots_combine() -> None:
    parsed = RobotsTxt.parse("User-agent: *\nContent-Usage: train-ai=y\n")
    decision = parsed.explain("https://e.com/a", "bot")
    statements, _ = robots_statements(parsed, decision)
    statements += header_statements(["train-ai=n"], ["ai-input=no"])
    found = usage_view("https://e.com/a", statements)
    assert found.state("train-ai") == DISALLOWED
    assert found.state("ai-input") == DISALLOWED


# TDMRep (CG final report, 10 May 2024).

TDM_FILE = b"""[
  {"location": "/directory-a/", "tdm-reservation": 1},
  {"location": "/directory-b/html/", "tdm-reservation": 1,
   "tdm-policy": "https://provider.com/policies/policy.json"},
  {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0}
]"""


@pytest.mark.parametrize(
    ("path", "state", "policy"),
    [
        ("/directory-a/x.pdf", DISALLOWED, None),
        ("/directory-b/html/p.html", DISALLOWED, "https://provider.com/policies/policy.json"),
        ("/directory-b/images/a.jpg", ALLOWED, None),
        ("/directory-b/images/a.png", UNKNOWN, None),
        ("/Directory-a/x.pdf", UNKNOWN, None),  # §6.1: case-sensitive
    ],
)
def test_tdmrep_example_file(path: str, state: str, policy: str | None) -> None:
    # §6.1.2, second example.
    found = usage_view(f"https://provider.com{path}", tdm=TdmRep.parse(TDM_FILE))
    assert found.state("tdm") == state
    assert found.tdm_policy == policy


def test_tdmrep_first_match_in_sequence_wins() -> None:
    # §6.1: "The most specific match is the first in sequence."
    tdm = TdmRep.parse(
        b'[{"location": "/", "tdm-reservation": 0},'
        b' {"location": "/private/", "tdm-reservation": 1}]'
    )
    assert usage_view("https://e.com/private/x", tdm=tdm).state("tdm") == ALLOWED


def test_tdmrep_percent_encoding_normalised() -> None:
    # §6.1: unreserved characters are decoded before comparison.
    tdm = TdmRep.parse(b'[{"location": "/%7Efred/", "tdm-reservation": 1}]')
    assert usage_view("https://e.com/~fred/x", tdm=tdm).state("tdm") == DISALLOWED


def test_tdmrep_end_anchor() -> None:
    # §6.1.1: "$" designates the end of the match pattern.
    tdm = TdmRep.parse(b'[{"location": "/this/path/exactly$", "tdm-reservation": 1}]')
    assert usage_view("https://e.com/this/path/exactly", tdm=tdm).state("tdm") == DISALLOWED
    assert usage_view("https://e.com/this/path/exactly/x", tdm=tdm).state("tdm") == UNKNOWN


@pytest.mark.parametrize("value", [b"2", b"true", b"-1", b"null", b"1.5"])
def test_tdmrep_other_values_are_protocol_errors(value: bytes) -> None:
    # §5.1: "Other values are considered protocol errors ... tdm-reservation is unset."
    tdm = TdmRep.parse(b'[{"location": "/", "tdm-reservation": ' + value + b"}]")
    found = usage_view("https://e.com/", tdm=tdm)
    assert found.state("tdm") == UNKNOWN
    assert any("unset" in note for note in found.notes)


@pytest.mark.parametrize(
    "body", [b"", b"{", b'{"location": "/"}', b"\xff\xfe", b"[" * 100_000, b"[1, 2]"]
)
def test_tdmrep_broken_file_is_no_reservation(body: bytes) -> None:
    # §6.1: a server that does not provide the representation does not implement the protocol.
    found = usage_view("https://e.com/", tdm=TdmRep.parse(body))
    assert found.state("tdm") == UNKNOWN


def test_tdmrep_rules_bounded() -> None:
    body = b"[" + b",".join([b'{"location": "/x", "tdm-reservation": 1}'] * (MAX_RULES + 5)) + b"]"
    tdm = TdmRep.parse(body)
    assert len(tdm.rules) == MAX_RULES
    assert "not read" in tdm.note


def test_policy_not_used_when_not_reserved() -> None:
    # §5.2: TDM Agents SHOULD NOT process tdm-policy when tdm-reservation is 0.
    tdm = TdmRep.parse(b'[{"location": "/", "tdm-reservation": 0, "tdm-policy": "https://p"}]')
    assert usage_view("https://e.com/", tdm=tdm).tdm_policy is None


def test_header_supersedes_file_and_meta_supersedes_both() -> None:
    # §6.7: file, then header, then HTML meta.
    tdm = TdmRep.parse(b'[{"location": "/", "tdm-reservation": 1}]')
    assert usage_view("https://e.com/", tdm=tdm, tdm_headers=(["0"], [])).state("tdm") == ALLOWED
    found = usage_view(
        "https://e.com/", tdm=tdm, tdm_headers=(["0"], []), metas=[("TDM-Reservation", "1")]
    )
    assert found.state("tdm") == DISALLOWED
    assert found.preferences["tdm"].sources[0].source == "meta"


def test_absence_resets_nothing() -> None:
    # §6.7: "the absence of tdm-reservation and tdm-policy MUST not reset current values".
    tdm = TdmRep.parse(b'[{"location": "/", "tdm-reservation": 1, "tdm-policy": "https://p"}]')
    found = usage_view("https://e.com/", tdm=tdm, metas=[("description", "x")])
    assert (found.state("tdm"), found.tdm_policy) == (DISALLOWED, "https://p")


def test_invalid_header_value_does_not_override() -> None:
    tdm = TdmRep.parse(b'[{"location": "/", "tdm-reservation": 1}]')
    found = usage_view("https://e.com/", tdm=tdm, tdm_headers=(["yes"], []))
    assert found.state("tdm") == DISALLOWED
    assert any("ignored" in note for note in found.notes)


def test_missing_file_is_no_reservation() -> None:
    found = usage_view("https://e.com/", tdm=TdmRep.missing("HTTP 404"))
    assert found.state("tdm") == UNKNOWN
    assert "no tdmrep.json (HTTP 404)" in found.notes[0]


def test_view_as_dict_is_plain_data() -> None:
    import json

    found = view(ATTACH_EXAMPLE, "/test", tdm=TdmRep.parse(TDM_FILE))
    data = json.loads(json.dumps(found.as_dict()))
    assert data["purposes"] == {
        "train-ai": DISALLOWED,
        "search": UNKNOWN,
        "ai-input": UNKNOWN,
        "tdm": UNKNOWN,
    }


@pytest.mark.parametrize("url", ["http://site.test/", "https://other.test/a?b", "/relative"])
def test_a_view_where_nothing_is_said_is_what_reading_nothing_gives(url: str) -> None:
    made = nothing_said(url)
    read = usage_view(url)
    assert made == read
    assert made.url == url
    assert dict(made.preferences) == dict(read.preferences)
    assert made.state("train-ai") == read.state("train-ai")
    assert made.explain() == read.explain()
    with pytest.raises(AttributeError):
        made.url = "http://else.test/"  # type: ignore[misc]  # frozen, as a view is
    assert nothing_said("http://a.test/").url == "http://a.test/"  # one URL per view
