"""SPEC 7: ``allowed`` and ``explain`` are one answer, found once, told two ways.

``RobotsTxt._decide`` finds the deciding rule; ``allowed`` returns its
verdict and ``explain`` names it. An :class:`Entry` without rules decides by
its outcome, through the same path for both.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from scrapy_robotrules import Decision, Entry, Outcome, Precedence, RobotsTxt
from scrapy_robotrules.engine.robots.precedence import NO_RULE, PRECEDENCE_MODES, rule_code

CONTENT = "User-agent: *\nDisallow: /a\nAllow: /b\nDisallow: /*.php\n"
URLS = ("/a", "/b", "/x.php", "/c", "/robots.txt", "/robots.txt?x=1", "https://e.com/a?q")


@pytest.mark.parametrize("forced", [(2, False), (3, True), (4, False)])
def test_both_tell_the_rule_the_core_found(
    monkeypatch: pytest.MonkeyPatch, forced: tuple[int, bool]
) -> None:
    robots = RobotsTxt.parse(CONTENT)
    asked: list[str] = []

    def decide(self: RobotsTxt, path: str, agent: str, precedence: str, agent_match: str) -> int:
        asked.append(path)
        return rule_code(*forced)

    monkeypatch.setattr(RobotsTxt, "_decide", decide)
    allow = forced[1]
    for url in URLS:
        assert robots.allowed(url, "bot") is allow
        decision = robots.explain(url, "bot")
        assert decision.allowed is allow
        assert decision.rule is not None
        assert (decision.rule.line, decision.rule.allow) == forced
    assert len(asked) == 2 * len(URLS)


def test_no_rule_from_the_core_is_allowed_and_named_as_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\n")
    monkeypatch.setattr(RobotsTxt, "_decide", lambda *_: NO_RULE)
    assert robots.allowed("/x", "bot")
    decision = robots.explain("/x", "bot")
    assert (decision.allowed, decision.rule) == (True, None)


@pytest.mark.parametrize("mode", PRECEDENCE_MODES)
def test_the_core_answers_what_the_rules_say(mode: Precedence) -> None:
    robots = RobotsTxt.parse(CONTENT)
    expected = {"/a": False, "/b": True, "/x.php": False, "/c": True, "/robots.txt": True}
    for url, allowed in expected.items():
        assert robots.allowed(url, "bot", mode) is allowed
        decision = robots.explain(url, "bot", mode)
        assert decision.allowed is allowed
        assert decision.rule is None or decision.rule.allow is allowed


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


def test_an_entry_without_rules_decides_by_its_outcome_for_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = entry(Outcome.DISALLOW_ALL)
    monkeypatch.setattr(Entry, "_outcome_allows", lambda self, path: path == "/b")
    assert made.allowed("https://e.com/b", "bot", "most-specific", "token")
    assert made.explain("https://e.com/b", "bot", "most-specific", "token").allowed
    assert not made.allowed("https://e.com/a", "bot", "most-specific", "token")
    decision = made.explain("https://e.com/a", "bot", "most-specific", "token")
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
