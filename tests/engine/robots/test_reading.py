"""SPEC 1 (reading a file) and SPEC 2 (groups), one rule per test."""

from __future__ import annotations

import pytest

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE


def rule_of(content: str | bytes, url: str, agent: str = "bot") -> tuple[str, str, int] | None:
    decision = RobotsTxt.parse(content).explain(url, agent)
    if decision.rule is None:
        return None
    return decision.rule.directive, decision.rule.pattern, decision.rule.line


# SPEC 1: bytes and text.


def test_utf8_bom_is_dropped() -> None:
    robots = RobotsTxt.parse(b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n")
    assert not robots.allowed("/x", "bot")


def test_str_bom_is_dropped() -> None:
    assert not RobotsTxt.parse("\ufeffUser-agent: *\nDisallow: /x\n").allowed("/x", "bot")


def test_invalid_utf8_is_kept_as_percent_encoded_octets() -> None:
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /caf\xe9/\n")
    assert not robots.allowed("/caf%E9/menu", "bot")
    assert not robots.allowed("/caf%e9/menu", "bot")
    # Dropping the byte would have made the rule /caf/ and blocked this:
    assert robots.allowed("/caf/menu", "bot")
    assert robots.allowed("/caf%C3%A9/menu", "bot")  # é in UTF-8 is another path


def test_utf8_pattern_matches_utf8_url_in_either_form() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /café\n".encode())
    assert not robots.allowed("/café", "bot")
    assert not robots.allowed("/caf%C3%A9", "bot")


def test_only_max_size_bytes_are_read_and_the_cut_line_is_dropped() -> None:
    head = b"User-agent: *\nDisallow: /a\n"
    filler = b"#" * (DEFAULT_MAX_SIZE - len(head) - 1) + b"\n"
    cut = head + filler + b"Disallow: /b\n"
    robots = RobotsTxt.parse(cut)
    assert robots.truncated
    assert not robots.allowed("/a", "bot")
    # "Disallow: /b" starts right at the limit: it is beyond it, not read.
    assert robots.allowed("/b", "bot")
    # A line cut in its middle is dropped rather than read as "Disallow: /"
    prefix = b"Disallow: /"
    padding = b"#" * (DEFAULT_MAX_SIZE - len(head) - 1 - len(prefix)) + b"\n"
    middle = head + padding + prefix + b"secret\n"
    assert len(head + padding + prefix) == DEFAULT_MAX_SIZE
    assert RobotsTxt.parse(middle).allowed("/", "bot")


def test_a_line_ending_exactly_at_the_limit_is_kept() -> None:
    head = b"User-agent: *\n"
    rule = b"Disallow: /b"
    padding = b"#" * (DEFAULT_MAX_SIZE - len(head) - len(rule) - 1) + b"\n"
    robots = RobotsTxt.parse(head + padding + rule + b"\nDisallow: /c\n")
    assert robots.truncated
    assert not robots.allowed("/b", "bot")
    assert robots.allowed("/c", "bot")


def test_max_size_is_a_setting() -> None:
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /a\nDisallow: /b\n", max_size=30)
    assert robots.truncated
    assert not robots.allowed("/a", "bot")
    assert robots.allowed("/b", "bot")


@pytest.mark.parametrize("newline", [b"\n", b"\r", b"\r\n"])
def test_line_breaks_and_line_numbers(newline: bytes) -> None:
    content = newline.join([b"# c", b"User-agent: *", b"", b"Disallow: /x"])
    assert rule_of(content, "/x") == ("disallow", "/x", 4)


def test_mixed_line_breaks_count_one_each() -> None:
    content = b"User-agent: *\r\n\rAllow: /a\n\r\nDisallow: /b"
    assert rule_of(content, "/a") == ("allow", "/a", 3)
    assert rule_of(content, "/b") == ("disallow", "/b", 5)


@pytest.mark.parametrize("separator", ["\x0b", "\x0c", "\x85", "\u2028"])
def test_no_other_character_ends_a_line(separator: str) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\nDisallow: /a{separator}Disallow: /b\n")
    assert robots.allowed("/b", "bot")


def test_comments_run_to_the_end_of_the_line_wherever_they_start() -> None:
    content = "User-agent: * # everyone\nDisallow: /a#b\n# Disallow: /c\n"
    assert rule_of(content, "/a") == ("disallow", "/a", 2)
    assert RobotsTxt.parse(content).allowed("/c", "bot")


def test_keys_are_case_insensitive_and_whitespace_is_trimmed() -> None:
    content = "  uSeR-AgEnT :   *  \n\tDISALLOW\t:\t/x\t\n"
    assert rule_of(content, "/x/y") == ("disallow", "/x", 2)


def test_two_words_without_colon_are_a_line() -> None:
    assert rule_of("user-agent bot\ndisallow /x\n", "/x") == ("disallow", "/x", 2)


def test_three_words_without_colon_are_not() -> None:
    assert RobotsTxt.parse("user-agent: bot\ndisallow /x /y\n").allowed("/x", "bot")
    assert RobotsTxt.parse("user agent bot\ndisallow: /x\n").allowed("/x", "bot")


@pytest.mark.parametrize("key", ["useragent", "user agent", "User-Agent"])
def test_user_agent_spellings(key: str) -> None:
    assert not RobotsTxt.parse(f"{key}: bot\nDisallow: /\n").allowed("/x", "bot")


@pytest.mark.parametrize(
    "key", ["dissallow", "dissalow", "disalow", "diasllow", "disallaw", "DISALLOW"]
)
def test_disallow_misspellings(key: str) -> None:
    assert rule_of(f"User-agent: *\n{key}: /x\n", "/x") == ("disallow", "/x", 2)


def test_other_misspellings_are_unknown_keys_and_counted() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisalloww: /x\nDis-allow: /y\nfoo bar baz\n")
    assert robots.allowed("/x", "bot")
    assert robots.allowed("/y", "bot")
    assert robots.unknown_lines == 3


def test_unknown_lines_are_counted_everywhere() -> None:
    content = "<html>\nUser-agent: a\nnot a rule\nUser-agent: b\nDisallow: /\nfoo: bar\n# fine\n\n"
    assert RobotsTxt.parse(content).unknown_lines == 3


def test_an_html_page_yields_no_groups() -> None:
    robots = RobotsTxt.parse(b"<!DOCTYPE html>\n<html><body>Not found</body></html>\n")
    assert robots.groups == ()
    assert robots.unknown_lines == 2
    assert robots.allowed("/anything", "bot")


# SPEC 2: groups.


def test_members_before_the_first_user_agent_are_ignored() -> None:
    robots = RobotsTxt.parse("Disallow: /\nUser-agent: *\nDisallow: /x\n")
    assert robots.allowed("/y", "bot")
    assert not robots.allowed("/x", "bot")


def test_user_agent_after_a_member_starts_a_new_group() -> None:
    # The Belle/Beast record of WWW::RobotRules.
    content = "User-agent: Belle\nDisallow: /west-wing/\nUser-agent: Beast\nDisallow:\n"
    robots = RobotsTxt.parse(content)
    assert not robots.allowed("/west-wing/", "Belle")
    assert robots.allowed("/west-wing/", "Beast")


def test_consecutive_user_agents_share_a_group_across_blank_and_comment_lines() -> None:
    content = "User-agent: a\n\n# note\nUser-agent: b\nDisallow: /x\n"
    robots = RobotsTxt.parse(content)
    assert not robots.allowed("/x", "a")
    assert not robots.allowed("/x", "b")
    [group] = robots.groups
    assert [(a.value, a.line) for a in group.user_agents] == [("a", 1), ("b", 4)]


@pytest.mark.parametrize("between", ["", "# c\n", "Sitemap: /s.xml\n", "Host: h\n", "Foo: bar\n"])
def test_blank_comment_sitemap_host_unknown_lines_do_not_end_a_group(between: str) -> None:
    content = f"User-agent: bot\nDisallow: /a\n\n{between}Disallow: /b\n"
    assert not RobotsTxt.parse(content).allowed("/b", "bot")


# SPEC 2: only a rule line ends a run of User-agent lines (RFC 9309 §2.2.4).

GITHUB = "User-agent: baidu\ncrawl-delay: 1\n\n\nUser-agent: *\n\nDisallow: /x\n"


def test_github_example_baidu_gets_the_disallow_and_the_delay() -> None:
    robots = RobotsTxt.parse(GITHUB)
    assert not robots.allowed("/x", "baidu")
    assert robots.crawl_delay("baidu") == 1.0
    assert not robots.allowed("/x", "otherbot")
    [group] = robots.groups
    assert [(a.value, a.line) for a in group.user_agents] == [("baidu", 1), ("*", 5)]
    decision = robots.explain("/x", "Baidu/2.0")
    assert decision.groups == [group]
    assert decision.rule is not None
    assert (decision.rule.pattern, decision.rule.line) == ("/x", 7)


@pytest.mark.parametrize(
    "member", ["Crawl-delay: 3", "Request-rate: 1/3", "Visit-time: 0600-0845", "Crawl-delay: x"]
)
def test_politeness_lines_do_not_end_the_user_agent_run(member: str) -> None:
    content = f"User-agent: a\n{member}\nUser-agent: b\nDisallow: /\n"
    robots = RobotsTxt.parse(content)
    assert len(robots.groups) == 1
    assert not robots.allowed("/x", "a")
    assert not robots.allowed("/x", "b")


def test_politeness_lines_belong_to_the_group_they_stand_in() -> None:
    content = (
        "User-agent: a\nCrawl-delay: 3\nRequest-rate: 1/4\nVisit-time: 0600-0845\n"
        "User-agent: b\nCrawl-delay: 5\nDisallow: /p\n"
        "User-agent: c\nDisallow: /q\n"
    )
    robots = RobotsTxt.parse(content)
    for agent in ("a", "b"):
        assert robots.crawl_delay(agent) == 5.0  # the largest in the group
        rate = robots.request_rate(agent)
        assert rate is not None
        assert rate.delay == 4.0
        assert len(robots.visit_time(agent)) == 1
        assert not robots.allowed("/p", agent)
    assert robots.crawl_delay("c") is None
    assert robots.request_rate("c") is None
    assert robots.visit_time("c") == []
    assert robots.allowed("/p", "c")


@pytest.mark.parametrize("rule", ["Disallow: /a", "Allow: /a", "Disallow:", "disallow /a"])
def test_a_rule_line_ends_the_run_even_with_an_empty_value(rule: str) -> None:
    content = f"User-agent: a\nCrawl-delay: 2\n{rule}\nUser-agent: b\nDisallow: /b\n"
    robots = RobotsTxt.parse(content)
    assert len(robots.groups) == 2
    assert robots.allowed("/b", "a")
    assert robots.crawl_delay("a") == 2.0
    assert robots.crawl_delay("b") is None


def test_rules_keep_their_line_numbers_across_a_joined_user_agent() -> None:
    content = "User-agent: a\nCrawl-delay: 1\n# c\nUser-agent: b\nAllow: /p\nDisallow: /\n"
    decision = RobotsTxt.parse(content).explain("/p", "a")
    assert decision.rule is not None
    assert (decision.rule.allow, decision.rule.line) == (True, 5)
    assert RobotsTxt.parse(content).unknown_lines == 0


def test_sitemap_and_host_are_file_wide_wherever_they_stand() -> None:
    content = (
        "Sitemap: /one.xml\nUser-agent: a\nSitemap: /two.xml\nHost: example.com\nDisallow: /\n"
    )
    robots = RobotsTxt.parse(content, "https://e.com/robots.txt")
    assert robots.sitemaps == ["https://e.com/one.xml", "https://e.com/two.xml"]
    assert robots.host == "example.com"


def test_group_line_numbers_for_explain() -> None:
    content = (
        "# header\nUser-agent: *\nDisallow: /a\n\nUser-agent: bot\nUser-agent: other\nAllow: /\n"
    )
    decision = RobotsTxt.parse(content).explain("/a", "bot")
    assert [str(g) for g in decision.groups] == ["User-agent: bot, User-agent: other (line 5)"]
    assert decision.rule is not None
    assert decision.rule.line == 7
    assert "Allow: / (line 7)" in decision.reason
