"""Usage signals as the drafts now say and as sites write them; RSL ``License`` lines.

aipref: the drafts of ``AIPREF_DRAFTS`` (vocab -08, attach -05); Content
Signals: Cloudflare's policy and the forms published files use
(``allow``/``disallow``, ``use``, ``Content-Signals``, lines before any
group, the response header); RSL 1.0: the file-wide ``License`` directive.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scrapy_robotrules.engine.cli.main import main
from scrapy_robotrules.engine.operator_tools.audit_trail import fetch_line
from scrapy_robotrules.engine.robots.robotstxt import License, RobotsTxt
from scrapy_robotrules.engine.robots.signal_lines import (
    LICENSE_NAMED_CHARS,
    LICENSES_NAMED,
    MAX_LICENSE_URL,
    MAX_LICENSES,
)
from scrapy_robotrules.engine.usage.preferences import (
    AIPREF_DRAFTS,
    ALLOWED,
    DISALLOWED,
    UNKNOWN,
    UsageView,
    read_headers,
    refuse_purposes,
    robots_statements,
    usage_view,
)
from scrapy_robotrules.engine.usage.vocabulary import read_aipref, read_content_signal

DOCS = Path(__file__).parents[3] / "docs" / "site-signals.rst"
ROBOTS_URL = "https://example.com/robots.txt"


def view(robots: str, path: str, agent: str = "testbot") -> UsageView:
    parsed = RobotsTxt.parse(robots, ROBOTS_URL)
    url = f"https://example.com{path}"
    statements, notes = robots_statements(parsed, parsed.explain(url, agent))
    notes = [*notes, *parsed.license_notes]  # as the command line and the crawl give them
    return usage_view(url, statements, notes=notes, licenses=parsed.licenses)


# 1. aipref as the drafts now say.


def test_the_drafts_followed_are_named_in_one_place_and_in_the_docs() -> None:
    assert set(AIPREF_DRAFTS) == {"vocab", "attach"}
    docs = DOCS.read_text("utf-8")
    for draft in AIPREF_DRAFTS.values():
        assert draft in docs
    found = view("User-agent: *\nContent-Usage: train-ai=n\n", "/")
    assert found.explain()[-1] == "read as aipref " + ", ".join(AIPREF_DRAFTS.values())


CONFLICTS = """\
User-agent: *
Allow: /
Disallow: /private/
Content-Usage: search=y
Content-Usage: /news/ train-ai=y
Content-Usage: /news/ train-ai=n, search=y
Content-Usage: /news/archive/ train-ai=y
Content-Usage: /private/ train-ai=y
"""


def test_rules_for_the_same_path_that_conflict_combine_a_refusal_winning() -> None:
    # attach §3.1: unlike Allow/Disallow, the refusal wins, whatever the order.
    found = view(CONFLICTS, "/news/today")
    assert found.state("train-ai") == DISALLOWED
    assert found.explain()[0] == (
        "train-ai: disallowed <- robots.txt line 6: Content-Usage: /news/ train-ai=n, search=y"
    )
    reversed_lines = CONFLICTS.replace(
        "Content-Usage: /news/ train-ai=y\nContent-Usage: /news/ train-ai=n, search=y\n",
        "Content-Usage: /news/ train-ai=n, search=y\nContent-Usage: /news/ train-ai=y\n",
    )
    assert view(reversed_lines, "/news/today").state("train-ai") == DISALLOWED


def test_the_longest_matching_path_decides_and_a_rule_without_path_is_the_shortest() -> None:
    archive = view(CONFLICTS, "/news/archive/2020")
    assert archive.state("train-ai") == ALLOWED
    assert archive.explain()[0].startswith("train-ai: allowed <- robots.txt line 7:")
    # search: only the rule without a path says it, and a longer one hides it.
    assert archive.state("search") == UNKNOWN
    home = view(CONFLICTS, "/about")
    assert (home.state("train-ai"), home.state("search")) == (UNKNOWN, ALLOWED)
    assert home.explain()[1] == "search: allowed <- robots.txt line 4: Content-Usage: search=y"


def test_a_path_robots_txt_disallows_has_no_preferences_and_the_view_says_why() -> None:
    found = view(CONFLICTS, "/private/x")
    assert {found.state(p) for p in ("train-ai", "search", "ai-input", "tdm")} == {UNKNOWN}
    assert "robots.txt disallows /private/x: no usage preferences apply (attach §3.1)" in (
        found.explain()
    )


def test_labels_of_earlier_drafts_are_kept_as_data_not_purposes() -> None:
    preferences, unknown, data = read_aipref("train-ai=y, bots=n, ai-output=y, train-genai=n")
    assert preferences == {"train-ai": True}
    assert data == (("bots", "n"), ("ai-output", "y"), ("train-genai", "n"))
    assert unknown == ("bots", "ai-output", "train-genai")
    found = view("User-agent: *\nContent-Usage: bots=n, ai-output=n\n", "/")
    assert found.state("train-ai") == UNKNOWN  # no earlier label stands for a purpose
    assert found.statements[0].as_dict()["data"] == {"bots": "n", "ai-output": "n"}
    assert "kept as data, no purpose: bots=n (robots.txt line 2: Content-Usage: bots=n," in (
        "\n".join(found.explain())
    )


def test_the_header_is_metadata_of_its_response_and_explain_names_it() -> None:
    statements, notes = read_headers(["search=y, train-ai=n"])
    found = usage_view("https://example.com/a", statements, notes=notes)
    assert found.explain()[:2] == [
        "train-ai: disallowed <- Content-Usage header 1: 'search=y, train-ai=n'",
        "search: allowed <- Content-Usage header 1: 'search=y, train-ai=n'",
    ]


# 2. Content-Signal as sites write it.


@pytest.mark.parametrize(
    ("value", "train_ai", "search"),
    [
        ("search=yes, ai-train=no, ai-input=yes", False, True),
        ("search=allow, ai-train=disallow", False, True),
        ("Search=Allow,AI-Train=DISALLOW", False, True),
        ("ai-train=yes, ai-train=no", False, None),  # said both ways: the refusal wins
        ("ai-train=disallow, ai-train=allow", False, None),
    ],
)
def test_content_signal_values(value: str, train_ai: bool, search: bool | None) -> None:
    preferences = read_content_signal(value)[0]
    assert preferences.get("train-ai") is train_ai
    assert preferences.get("search") is search


def test_the_use_key_is_kept_as_data() -> None:
    preferences, unknown, data = read_content_signal("ai-train=no, use=reference")
    assert (preferences, unknown, data) == ({"train-ai": False}, (), (("use", "reference"),))
    found = view("User-agent: *\nContent-Signal: search=yes, use=Immediate\n", "/")
    assert found.statements[0].data == (("use", "Immediate"),)
    assert found.state("search") == ALLOWED


@pytest.mark.parametrize(
    "value", ["ai-train=maybe", "ai-train", "ai-train: no", "ai-train=no search=yes", "ai-train=1"]
)
def test_what_cannot_be_read_is_reported_never_consent(value: str) -> None:
    found = view(f"User-agent: *\nContent-Signal: {value}\n", "/")
    assert found.state("train-ai") == UNKNOWN
    assert any(line.startswith("unknown, no effect:") for line in found.explain())


def test_the_plural_field_name_is_read_and_shown_as_written() -> None:
    found = view("User-agent: *\nContent-Signals: ai-train=no\n", "/")
    assert found.explain()[0] == (
        "train-ai: disallowed <- robots.txt line 2: Content-Signals: ai-train=no"
    )


def test_an_html_page_naming_content_type_holds_no_usage_line() -> None:
    page = b'<html><head>\n<meta http-equiv="Content-Type" content="text/html">\n' * 50
    assert RobotsTxt.parse(page).usage_lines == ()
    robots = RobotsTxt.parse(page + b"content-USAGE: train-ai=n\n")
    assert robots.usage_lines == ((101, "content-usage", "train-ai=n"),)


OUTSIDE = """\
Content-Signal: search=yes, ai-train=no

User-agent: namedbot
Allow: /
Content-Signal: /open/ ai-train=yes

User-agent: *
Disallow: /private/
"""


@pytest.mark.parametrize("agent", ["namedbot", "otherbot"])
def test_a_line_outside_any_group_applies_to_every_crawler(agent: str) -> None:
    found = view(OUTSIDE, "/page", agent)
    assert (found.state("train-ai"), found.state("search")) == (DISALLOWED, ALLOWED)
    assert found.explain()[0] == (
        "train-ai: disallowed <- robots.txt line 1: Content-Signal: search=yes, ai-train=no"
    )
    assert not found.notes


def test_a_line_in_a_group_applies_to_that_groups_crawlers_only() -> None:
    # The group's longer path wins for its crawler; others keep the file-wide line.
    assert view(OUTSIDE, "/open/x", "namedbot").state("train-ai") == ALLOWED
    assert view(OUTSIDE, "/open/x", "otherbot").state("train-ai") == DISALLOWED
    # Where robots.txt disallows, no line applies, file-wide or not.
    assert view(OUTSIDE, "/private/x", "otherbot").state("train-ai") == UNKNOWN


def test_a_file_of_nothing_but_the_signal_applies_to_every_crawler() -> None:
    assert view("Content-Signal: ai-input=no\n", "/a").state("ai-input") == DISALLOWED


def test_the_response_header_singular_and_plural() -> None:
    statements, notes = read_headers(
        content_signal=["search=yes"], content_signals=["ai-train=disallow, use=full"]
    )
    found = usage_view("https://example.com/a", statements, notes=notes)
    assert (found.state("train-ai"), found.state("search")) == (DISALLOWED, ALLOWED)
    assert found.explain()[0] == (
        "train-ai: disallowed <- Content-Signals header 1: 'ai-train=disallow, use=full'"
    )
    assert "kept as data, no purpose: use=full" in found.explain()[4]


# 3. Licences named in robots.txt (RSL 1.0).

LICENSED = """\
License: https://example.com/license.xml
User-agent: *
Disallow: /private/
license : /terms/rsl.xml   # a path: resolved against the file's URL
LICENSE: https://example.com/license.xml
# License: https://example.com/commented.xml
License: CC-BY-4.0
Content-Usage: train-ai=n
"""


def test_license_lines_are_read_per_file_wherever_they_stand() -> None:
    parsed = RobotsTxt.parse(LICENSED, ROBOTS_URL)
    assert parsed.licenses == (
        License("https://example.com/license.xml", 1),
        License("https://example.com/terms/rsl.xml", 4),
        License("CC-BY-4.0", 7),  # not a URL: kept as written, never fetched
    )
    # A License line is no rule: the group's rules are unchanged.
    assert not parsed.allowed("https://example.com/private/x", "bot")
    assert RobotsTxt.parse("User-agent: *\nDisallow:\n").licenses == ()


def test_a_licence_url_loses_its_user_name_and_password() -> None:
    parsed = RobotsTxt.parse("License: https://bob:s3cret@example.com/l.xml?a=b@c\n", ROBOTS_URL)
    assert parsed.licenses == (License("https://example.com/l.xml?a=b@c", 1),)


def test_license_lines_are_bounded() -> None:
    robots = "".join(f"License: https://example.com/l{i}.xml\n" for i in range(MAX_LICENSES + 5))
    assert len(RobotsTxt.parse(robots).licenses) == MAX_LICENSES


LONG_LICENSE = "User-agent: *\nContent-Usage: /p/ train-ai=n\nLicense: https://lic.test/"


def test_a_long_licence_is_cut_where_it_is_read_and_explain_says_so() -> None:
    robots = LONG_LICENSE + "x" * 450_000 + "\n"
    parsed = RobotsTxt.parse(robots, ROBOTS_URL)
    (kept,) = parsed.licenses
    assert kept == License(("https://lic.test/" + "x" * 450_000)[:MAX_LICENSE_URL], 3)
    assert parsed.license_notes == (
        "robots.txt line 3: a License value of 450,017 characters, cut to its first 2,048"
        " (MAX_LICENSE_URL)",
    )
    assert parsed.license_notes[0] in view(robots, "/p/x").explain()
    # The refusal refers to the file's licences (the same tuple) and names them short.
    decision = refuse_purposes(
        parsed, parsed.explain("https://example.com/p/x", "bot"), ["train-ai"]
    )
    assert not decision.allowed
    assert decision.licenses is parsed.licenses
    assert len(decision.note) < 600
    assert decision.note.endswith(
        f"License: https://lic.test/{'x' * (LICENSE_NAMED_CHARS - 17)}... (2,048 characters)"
    )


def test_many_licences_keep_a_few_and_a_refusal_names_fewer() -> None:
    robots = "User-agent: *\nContent-Usage: train-ai=n\n" + "".join(
        f"License: https://lic.test/{i}/{'x' * 3000}\n" for i in range(1000)
    )
    parsed = RobotsTxt.parse(robots, ROBOTS_URL)
    assert len(parsed.licenses) == MAX_LICENSES
    assert all(len(lic.url) == MAX_LICENSE_URL for lic in parsed.licenses)
    assert len(parsed.license_notes) == MAX_LICENSES + 1
    assert parsed.license_notes[-1] == (
        f"robots.txt line {3 + MAX_LICENSES}: License lines past the first {MAX_LICENSES}"
        " not read (MAX_LICENSES)"
    )
    assert parsed.license_notes[-1] in view(robots, "/x").explain()
    decision = refuse_purposes(parsed, parsed.explain("https://example.com/x", "bot"), ["train-ai"])
    assert decision.note.count("License: ") == LICENSES_NAMED
    assert decision.note.endswith(f"; {MAX_LICENSES - LICENSES_NAMED} more License lines")
    assert len(decision.note) < LICENSES_NAMED * (LICENSE_NAMED_CHARS + 80) + 200


def test_a_cut_licence_url_never_keeps_part_of_a_password() -> None:
    secret = "s" * (2 * MAX_LICENSE_URL)
    parsed = RobotsTxt.parse(f"License: https://bob:{secret}@lic.test/terms\n", ROBOTS_URL)
    assert parsed.licenses == (License("https://lic.test/terms", 1),)


def test_licenses_in_the_view_and_in_a_refusal() -> None:
    found = view(LICENSED, "/page")
    explained = found.explain()
    assert (
        "licence, not enforced (RSL 1.0): robots.txt line 1: License: https://example.com/license.xml"
        in explained
    )
    assert found.as_dict()["licenses"] == [
        "https://example.com/license.xml",
        "https://example.com/terms/rsl.xml",
        "CC-BY-4.0",
    ]
    parsed = RobotsTxt.parse(LICENSED, ROBOTS_URL)
    refused = refuse_purposes(parsed, parsed.explain("https://example.com/p", "bot"), ["train-ai"])
    assert not refused.allowed
    assert refused.reason.endswith(
        "robots.txt line 8: Content-Usage: train-ai=n;"
        " robots.txt line 1: License: https://example.com/license.xml;"
        " robots.txt line 4: License: https://example.com/terms/rsl.xml;"
        " robots.txt line 7: License: CC-BY-4.0"
    )


def test_licenses_in_the_audit_trail_fetch_line() -> None:
    line = json.loads(
        fetch_line(
            "https://example.com",
            at=1.0,
            outcome="rules",
            elapsed=0.1,
            licenses=["https://user:pw@example.com/license.xml"],
        )
    )
    assert line["licenses"] == ["https://example.com/license.xml"]


def test_licenses_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text("License: https://example.com/license.xml\nUser-agent: *\nDisallow: /x\n")
    status = main(["check", str(robots), "https://example.com/a", "--agent", "bot"])
    assert status == 0
    assert "License: https://example.com/license.xml" in capsys.readouterr().out
