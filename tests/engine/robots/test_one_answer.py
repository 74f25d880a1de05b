"""SPEC 7: ``allowed`` and ``explain`` are one answer, told two ways.

``allowed`` says the verdict of the deciding rule and ``explain`` names that
rule, whatever the URL, the mode or the question asked before. An
:class:`Entry` without rules decides by its outcome, the same for both. On
generated files, the differential tests check both against the reference.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from scrapy_robotrules import Decision, Entry, Outcome, Precedence, RobotsTxt
from scrapy_robotrules.engine.robots.precedence import PRECEDENCE_MODES

CONTENT = "User-agent: *\nDisallow: /a\nAllow: /b\nDisallow: /*.php\n"


@pytest.mark.parametrize("mode", PRECEDENCE_MODES)
def test_both_tell_the_rule_that_decides(mode: Precedence) -> None:
    # (verdict, deciding rule's line) of each URL, each asked after another question.
    expected = {
        "/a": (False, 2),
        "/b": (True, 3),
        "/x.php": (False, 4),
        "/c": (True, None),
        "/robots.txt": (True, None),
        "/robots.txt?x=1": (True, None),
        "https://e.com/a?q": (False, 2),
    }
    robots = RobotsTxt.parse(CONTENT)
    for url, (allowed, line) in expected.items():
        assert robots.allowed(url, "bot", mode) is allowed, url
        decision = robots.explain(url, "bot", mode)
        assert decision.allowed is allowed, url
        assert (decision.rule and decision.rule.line) == line, url
        assert decision.rule is None or decision.rule.allow is allowed
        # Explained first, by a file asked nothing yet.
        fresh = RobotsTxt.parse(CONTENT).explain(url, "bot", mode)
        assert (fresh.allowed, fresh.rule, fresh.path) == (allowed, decision.rule, decision.path)


EARLIER = RobotsTxt.parse("User-agent: *\nDisallow: /a\n")


def entry(outcome: Outcome, robots: RobotsTxt | None = None) -> Entry:
    return Entry("https://e.com", outcome, robots, fetched_at=0, fresh_until=1, status=503)


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (entry(Outcome.RULES, EARLIER), {"/a": False, "/b": True, "/robots.txt": True}),
        (entry(Outcome.UNREACHABLE, EARLIER), {"/a": False, "/b": True, "/robots.txt": True}),
        (entry(Outcome.UNREACHABLE), {"/a": False, "/b": False, "/robots.txt": True}),
        (entry(Outcome.ALLOW_ALL), {"/a": True, "/b": True, "/robots.txt": True}),
        (entry(Outcome.DISALLOW_ALL), {"/a": False, "/b": False, "/robots.txt": True}),
        # A file kept beside an outcome that decides alone does not decide.
        (entry(Outcome.ALLOW_ALL, EARLIER), {"/a": True, "/b": True, "/robots.txt": True}),
    ],
    ids=["rules", "unreachable-earlier", "unreachable", "allow-all", "disallow-all", "kept"],
)
def test_an_entry_answers_once_for_both(made: Entry, expected: dict[str, bool]) -> None:
    for path, allowed in expected.items():
        url = "https://e.com" + path
        assert made.allowed(url, "bot", "most-specific", "token") is allowed
        decision = made.explain(url, "bot", "most-specific", "token")
        assert isinstance(decision, Decision)
        assert decision.allowed is allowed, decision
        if path == "/robots.txt":
            assert decision.reason == "allowed: /robots.txt itself is always allowed"


def test_an_entry_without_rules_says_why_for_both() -> None:
    made = entry(Outcome.DISALLOW_ALL)
    assert not made.allowed("https://e.com/a", "bot", "most-specific", "token")
    decision = made.explain("https://e.com/a", "bot", "most-specific", "token")
    assert not decision.allowed
    assert decision.reason == "disallowed: robots.txt refused (HTTP 503): everything disallowed"


def test_a_decision_is_the_frozen_dataclass_it_says_it_is() -> None:
    """Its own ``__init__`` (a fast one) makes what the dataclass's would have made."""
    fields: dict[str, Any] = {
        "allowed": False,
        "rule": None,
        "groups": [],
        "url": "http://a.test/x",
        "path": "/x",
        "agent": "bot",
        "precedence": "most-specific",
        "agent_match": "token",
    }
    made = Decision(*fields.values())
    assert made == Decision(**fields) == Decision(**fields, note="")
    assert {f.name: getattr(made, f.name) for f in dataclasses.fields(made)} == {
        **fields,
        "note": "",
        "refused_by": "",
        "licenses": (),
    }
    assert dataclasses.replace(made, allowed=True).allowed
    assert repr(made).startswith("Decision(allowed=False, rule=None, groups=[], url=")
    assert Decision(**fields, note="why") != made
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.allowed = True  # type: ignore[misc]
