"""SPEC 3: which groups apply to a crawler, in both matching styles."""

from __future__ import annotations

import pytest

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots.agents import group_token, product_token


@pytest.mark.parametrize(
    ("agent", "token"),
    [("MyBot/1.2 (+https://x)", "mybot"), ("Foo Bar", "foo"), ("  BOT  ", "bot"), ("", "")],
)
def test_product_token(agent: str, token: str) -> None:
    assert product_token(agent) == token


@pytest.mark.parametrize(
    ("value", "token"),
    [("googlebot/1.2", "googlebot"), ("googlebot*", "googlebot"), ("*", "*"), ("Foo Bar", "foo")],
)
def test_group_token(value: str, token: str) -> None:
    assert group_token(value) == token


FILE = (
    "User-agent: *\nDisallow: /star\n\n"
    "User-agent: bot\nDisallow: /bot1\n\n"
    "User-agent: robot\nDisallow: /robot\n\n"
    "User-agent: BOT\nDisallow: /bot2\n"
)


def test_token_style_merges_every_equal_group_and_never_inherits_star() -> None:
    robots = RobotsTxt.parse(FILE)
    assert not robots.allowed("/bot1", "Bot/2.0")
    assert not robots.allowed("/bot2", "Bot/2.0")
    assert robots.allowed("/star", "Bot/2.0")
    assert robots.allowed("/robot", "Bot/2.0")
    assert [g.line for g in robots.explain("/", "bot").groups] == [4, 10]


def test_token_style_falls_back_to_star_groups_merged() -> None:
    robots = RobotsTxt.parse(
        "User-agent: *\nDisallow: /a\n\nUser-agent: x\nAllow: /\n\nUser-agent: *\nDisallow: /b\n"
    )
    assert not robots.allowed("/a", "other")
    assert not robots.allowed("/b", "other")


def test_substring_style_takes_the_first_group_whose_name_is_in_the_token() -> None:
    robots = RobotsTxt.parse(FILE)
    # "robot" is in "spambot"? no; "bot" is, and comes first.
    assert not robots.allowed("/bot1", "Spambot/1.0", agent_match="substring")
    assert robots.allowed("/bot2", "Spambot/1.0", agent_match="substring")
    # For "robot", the first group whose name is a substring is "bot" (line 4).
    assert [g.line for g in robots.explain("/", "Robot", agent_match="substring").groups] == [4]


def test_substring_style_falls_back_to_star() -> None:
    robots = RobotsTxt.parse(FILE)
    assert not robots.allowed("/star", "crawler", agent_match="substring")


def test_no_applicable_group_allows_everything() -> None:
    robots = RobotsTxt.parse("User-agent: other\nDisallow: /\n")
    decision = robots.explain("/x", "bot")
    assert decision.allowed
    assert decision.groups == []
    assert "no group applies" in decision.reason


def test_empty_user_agent_value_names_no_crawler_in_token_style() -> None:
    robots = RobotsTxt.parse("User-agent:\nDisallow: /\n")
    assert robots.allowed("/x", "bot")
    assert robots.explain("/x", "bot").groups == []


def test_empty_user_agent_value_applies_to_every_crawler_in_substring_style() -> None:
    # WWW::RobotRules (index of an empty name is 0) and urllib.robotparser ('' in agent).
    robots = RobotsTxt.parse("User-agent:\nDisallow: /\n")
    for agent in ("bot", "OtherBot/1.0", ""):
        assert not robots.allowed("/x", agent, agent_match="substring")
        assert robots.explain("/x", agent, agent_match="substring").groups == [robots.groups[0]]


def test_empty_user_agent_value_is_first_match_in_substring_style() -> None:
    content = (
        "User-agent: *\nDisallow: /a\nUser-agent:\nDisallow: /b\nUser-agent: bot\nDisallow: /c\n"
    )
    robots = RobotsTxt.parse(content)
    # substring: the first group whose name is in the token applies, alone.
    assert robots.allowed("/a", "bot", agent_match="substring")
    assert not robots.allowed("/b", "bot", agent_match="substring")
    assert robots.allowed("/c", "bot", agent_match="substring")
    # token: the empty group names nobody; bot's own group applies, else "*".
    assert robots.allowed("/b", "bot")
    assert not robots.allowed("/c", "bot")
    assert not robots.allowed("/a", "other")
    assert robots.allowed("/b", "other")
