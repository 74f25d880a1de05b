"""RobotRules, the multi-host database: the WWW::RobotRules contract (t/rules.t) and SPEC 8."""

from __future__ import annotations

import pytest

from scrapy_robotrules import Entry, MemoryStore, Outcome, RobotRules, RobotsTxt

T0 = 1_000_000.0
DAY = 24 * 3600.0

ROBOTS = "User-agent: *\nDisallow: /private\n"


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make(agent: str = "MyBot/1.0", capacity: int | None = None) -> tuple[RobotRules, FakeClock]:
    clock = FakeClock()
    return RobotRules(agent, capacity=capacity, clock=clock), clock


def held(db: RobotRules, *hosts: str) -> list[str]:
    """Which of ``hosts`` the database still holds rules for."""
    return [h for h in hosts if f"http://{h}/" in db]


# The WWW::RobotRules contract.


def test_unknown_origin_is_none() -> None:
    db, _ = make()
    assert db.allowed("http://a.com/private") is None
    assert db.explain("http://a.com/private") is None


def test_parsed_origin_answers() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", ROBOTS)
    assert db.allowed("http://a.com/private/x") is False
    assert db.allowed("http://a.com/public") is True
    assert db.allowed("http://b.com/private/x") is None


def test_parse_returns_the_parsed_file() -> None:
    db, _ = make()
    robots = db.parse("http://a.com/robots.txt", ROBOTS)
    assert isinstance(robots, RobotsTxt)
    assert robots.url == "http://a.com/robots.txt"


def test_rules_are_per_agent() -> None:
    content = "User-agent: MyBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n"
    mine, _ = make("MyBot/1.0")
    other, _ = make("OtherBot/2.0")
    for db in (mine, other):
        db.parse("http://a.com/robots.txt", content)
    assert mine.allowed("http://a.com/public") is False
    assert other.allowed("http://a.com/public") is True


def test_http_and_https_are_different_origins() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", ROBOTS)
    assert db.allowed("https://a.com/private") is None
    db.parse("https://a.com/robots.txt", "User-agent: *\nDisallow: /\n")
    assert db.allowed("https://a.com/public") is False
    assert db.allowed("http://a.com/public") is True


def test_default_ports_are_folded() -> None:
    db, _ = make()
    db.parse("http://a.com:80/robots.txt", ROBOTS)
    db.parse("https://b.com/robots.txt", ROBOTS)
    assert db.allowed("http://a.com/private") is False
    assert db.allowed("https://b.com:443/private") is False
    assert len(db) == 2


def test_other_ports_are_other_origins() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", ROBOTS)
    assert db.allowed("http://a.com:8080/private") is None
    assert db.allowed("https://a.com:80/private") is None


def test_host_is_case_insensitive() -> None:
    db, _ = make()
    db.parse("http://A.Example.COM/robots.txt", ROBOTS)
    assert db.allowed("http://a.example.com/private") is False
    assert db.allowed("HTTP://A.EXAMPLE.COM/private") is False


def test_path_stays_case_sensitive() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", ROBOTS)
    assert db.allowed("http://a.com/PRIVATE") is True


def test_parse_again_replaces_the_origins_rules() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", ROBOTS)
    db.parse("http://a.com/robots.txt", "User-agent: *\nDisallow: /other\n")
    assert db.allowed("http://a.com/private") is True
    assert db.allowed("http://a.com/other") is False
    assert len(db) == 1


def test_robots_txt_itself_is_allowed() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", "User-agent: *\nDisallow: /\n")
    assert db.allowed("http://a.com/robots.txt") is True
    assert db.allowed("http://a.com/x") is False


def test_absolute_url_rules_resolve_against_the_robots_url() -> None:
    db, _ = make()
    content = "User-agent: *\nDisallow: http://a.com/abs\nDisallow: http://b.com/other\n"
    db.parse("http://a.com/robots.txt", content)
    assert db.allowed("http://a.com/abs/x") is False
    assert db.allowed("http://a.com/other") is True


# Freshness, with a fake clock.


def test_fresh_until_in_the_past_is_none_again() -> None:
    db, clock = make()
    db.parse("http://a.com/robots.txt", ROBOTS, fresh_until=T0 + 60)
    assert db.allowed("http://a.com/private") is False
    clock.now = T0 + 59.9
    assert db.allowed("http://a.com/private") is False
    clock.now = T0 + 60
    assert db.allowed("http://a.com/private") is None
    assert db.explain("http://a.com/private") is None


def test_fresh_until_already_past_is_never_fresh() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", ROBOTS, fresh_until=T0 - 1)
    assert db.allowed("http://a.com/private") is None


def test_stale_entry_is_still_held() -> None:
    # Stale rules keep deciding until new ones arrive (SPEC 8): the entry is kept.
    db, clock = make()
    db.parse("http://a.com/robots.txt", ROBOTS, fresh_until=T0 + 60)
    clock.now = T0 + 3600
    entry = db.entry("http://a.com/x")
    assert entry is not None
    assert entry.allowed("http://a.com/private", db.agent, db.precedence, db.agent_match) is False
    assert db.fresh_entry("http://a.com/x") is None


def test_default_freshness_is_24_hours() -> None:
    db, clock = make()
    db.parse("http://a.com/robots.txt", ROBOTS)
    entry = db.entry("http://a.com/")
    assert entry is not None
    assert entry.fetched_at == T0
    assert entry.fresh_until == T0 + DAY
    clock.now = T0 + DAY - 1
    assert db.allowed("http://a.com/private") is False
    clock.now = T0 + DAY
    assert db.allowed("http://a.com/private") is None


def test_put_default_freshness_is_24_hours_too() -> None:
    db, clock = make()
    db.put("http://a.com/robots.txt", Outcome.ALLOW_ALL, status=404)
    clock.now = T0 + DAY - 1
    assert db.allowed("http://a.com/x") is True
    clock.now = T0 + DAY
    assert db.allowed("http://a.com/x") is None


# Capacity: least recently used goes first.


def test_capacity_evicts_the_oldest() -> None:
    db, _ = make(capacity=2)
    for host in ("a.com", "b.com", "c.com"):
        db.parse(f"http://{host}/robots.txt", ROBOTS)
    assert len(db) == 2
    assert db.allowed("http://a.com/private") is None
    assert db.allowed("http://b.com/private") is False
    assert db.allowed("http://c.com/private") is False
    assert db.evicted == 1


def test_a_lookup_refreshes_recency() -> None:
    db, _ = make(capacity=2)
    db.parse("http://a.com/robots.txt", ROBOTS)
    db.parse("http://b.com/robots.txt", ROBOTS)
    assert db.allowed("http://a.com/private") is False  # a.com is now the most recent
    db.parse("http://c.com/robots.txt", ROBOTS)
    assert held(db, "a.com", "b.com", "c.com") == ["a.com", "c.com"]
    assert db.evicted == 1


def test_parse_again_refreshes_recency_without_evicting() -> None:
    db, _ = make(capacity=2)
    db.parse("http://a.com/robots.txt", ROBOTS)
    db.parse("http://b.com/robots.txt", ROBOTS)
    db.parse("http://a.com/robots.txt", ROBOTS)
    assert db.evicted == 0
    db.parse("http://c.com/robots.txt", ROBOTS)
    assert held(db, "a.com", "b.com", "c.com") == ["a.com", "c.com"]


def test_evicted_counts_every_eviction() -> None:
    db, _ = make(capacity=1)
    for i in range(5):
        db.parse(f"http://h{i}.com/robots.txt", ROBOTS)
    assert db.evicted == 4
    assert len(db) == 1


def test_no_capacity_means_no_eviction() -> None:
    db, _ = make()
    for i in range(300):
        db.parse(f"http://h{i}.com/robots.txt", ROBOTS)
    assert len(db) == 300
    assert db.evicted == 0


def test_capacity_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="capacity"):
        RobotRules("bot", capacity=0)


def test_memory_store_reports_what_it_drops() -> None:
    dropped: list[str] = []
    store = MemoryStore(1, lambda entry: dropped.append(entry.origin))
    for origin in ("http://a.com", "http://b.com"):
        store.put(Entry(origin, Outcome.ALLOW_ALL, None, fetched_at=T0, fresh_until=T0 + 1))
    assert dropped == ["http://a.com"]
    assert store.get("http://a.com") is None
    assert store.get("http://b.com") is not None


def test_forget_drops_one_origin() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", ROBOTS)
    db.parse("http://b.com/robots.txt", ROBOTS)
    db.forget("http://a.com/anything")
    assert db.allowed("http://a.com/private") is None
    assert db.allowed("http://b.com/private") is False
    assert db.evicted == 0


# The agent.


def test_changing_the_agent_forgets_every_origin() -> None:
    db, _ = make("MyBot/1.0")
    db.parse("http://a.com/robots.txt", ROBOTS)
    db.parse("http://b.com/robots.txt", ROBOTS)
    db.agent = "OtherBot/1.0"
    assert db.agent == "OtherBot/1.0"
    assert len(db) == 0
    assert db.allowed("http://a.com/private") is None
    assert db.allowed("http://b.com/private") is None


def test_setting_the_same_agent_keeps_every_origin() -> None:
    db, _ = make("MyBot/1.0")
    db.parse("http://a.com/robots.txt", ROBOTS)
    db.agent = "MyBot/1.0"
    assert len(db) == 1
    assert db.allowed("http://a.com/private") is False


def test_forgetting_on_agent_change_is_not_eviction() -> None:
    db, _ = make("MyBot/1.0")
    db.parse("http://a.com/robots.txt", ROBOTS)
    db.agent = "OtherBot"
    assert db.evicted == 0


# Settings.


def test_invalid_precedence_names_the_choices() -> None:
    with pytest.raises(ValueError, match="precedence") as info:
        RobotRules("bot", precedence="longest-match")  # type: ignore[arg-type]
    for choice in ("'most-specific'", "'first-match'", "'allow-first'"):
        assert choice in str(info.value)


def test_invalid_agent_match_names_the_choices() -> None:
    with pytest.raises(ValueError, match="agent_match") as info:
        RobotRules("bot", agent_match="regex")  # type: ignore[arg-type]
    for choice in ("'token'", "'substring'"):
        assert choice in str(info.value)


def test_precedence_is_used() -> None:
    content = "User-agent: *\nDisallow: /folder1/\nAllow: /folder1/myfile.html\n"
    specific = RobotRules("bot")
    first = RobotRules("bot", precedence="first-match")
    for db in (specific, first):
        db.parse("http://a.com/robots.txt", content)
    assert specific.allowed("http://a.com/folder1/myfile.html") is True
    assert first.allowed("http://a.com/folder1/myfile.html") is False


def test_agent_match_is_used() -> None:
    content = "User-agent: bot\nDisallow: /\n"
    token = RobotRules("Robot")
    substring = RobotRules("Robot", agent_match="substring")
    for db in (token, substring):
        db.parse("http://a.com/robots.txt", content)
    assert token.allowed("http://a.com/x") is True
    assert substring.allowed("http://a.com/x") is False


# explain().


def test_explain_gives_the_rule_and_its_line() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", "# hi\nUser-agent: *\nAllow: /p/ok\nDisallow: /p\n")
    decision = db.explain("http://a.com/p/x")
    assert decision is not None
    assert decision.allowed is False
    assert decision.rule is not None
    assert (decision.rule.directive, decision.rule.pattern, decision.rule.line) == (
        "disallow",
        "/p",
        4,
    )
    assert "line 4" in decision.reason


def test_explain_agrees_with_allowed() -> None:
    db, _ = make()
    db.parse("http://a.com/robots.txt", ROBOTS)
    for url in ("http://a.com/private", "http://a.com/public", "http://a.com/robots.txt"):
        decision = db.explain(url)
        assert decision is not None
        assert decision.allowed is db.allowed(url)


# put(): outcomes of a fetch that gave no rules.


def test_put_allow_all_allows_everything_and_says_why() -> None:
    db, _ = make()
    db.put("http://a.com/robots.txt", Outcome.ALLOW_ALL, status=404)
    assert db.allowed("http://a.com/anything") is True
    decision = db.explain("http://a.com/anything")
    assert decision is not None
    assert decision.allowed is True
    assert decision.rule is None
    assert "404" in decision.reason
    assert "no robots.txt" in decision.reason


def test_put_disallow_all_disallows_everything_and_says_why() -> None:
    db, _ = make()
    db.put("http://a.com/robots.txt", Outcome.DISALLOW_ALL, status=403)
    assert db.allowed("http://a.com/") is False
    assert db.allowed("http://a.com/anything") is False
    decision = db.explain("http://a.com/anything")
    assert decision is not None
    assert decision.allowed is False
    assert "403" in decision.reason


def test_put_unreachable_disallows_everything_and_says_why() -> None:
    db, _ = make()
    db.put("http://a.com/robots.txt", Outcome.UNREACHABLE, status=503)
    assert db.allowed("http://a.com/anything") is False
    decision = db.explain("http://a.com/anything")
    assert decision is not None
    assert decision.allowed is False
    assert "503" in decision.reason
    assert "unreachable" in decision.reason


def test_put_unreachable_without_status_says_no_answer() -> None:
    # A network error (DNS, refused, timeout) has no HTTP status.
    db, _ = make()
    db.put("http://a.com/robots.txt", Outcome.UNREACHABLE)
    assert db.allowed("http://a.com/anything") is False
    decision = db.explain("http://a.com/anything")
    assert decision is not None
    assert "unreachable" in decision.reason
    assert "no answer" in decision.reason


def test_unreachable_keeps_deciding_by_earlier_rules() -> None:
    # RFC 9309 §2.4: rules fetched earlier are used while robots.txt is unreachable.
    db, _ = make()
    earlier = db.parse("http://a.com/robots.txt", ROBOTS)
    db.put("http://a.com/robots.txt", Outcome.UNREACHABLE, earlier, status=500)
    assert db.allowed("http://a.com/public") is True
    assert db.allowed("http://a.com/private") is False
    decision = db.explain("http://a.com/private")
    assert decision is not None
    assert decision.rule is not None
    assert decision.rule.line == 2


def test_put_records_the_fetch() -> None:
    db, _ = make()
    entry = db.put(
        "http://a.com/robots.txt",
        Outcome.ALLOW_ALL,
        fresh_until=T0 + 5,
        status=301,
        final_url="http://elsewhere.com/robots.txt",
    )
    assert entry.origin == "http://a.com"
    assert entry.status == 301
    assert entry.url == "http://elsewhere.com/robots.txt"
    assert db.entry("http://a.com/x") is entry


def test_rules_outcome_without_a_file_is_refused_or_explained() -> None:
    # Outcome.RULES with no parsed file is a caller's mistake: put() may refuse it,
    # but it must not leave an entry whose explain() crashes.
    db, _ = make()
    try:
        db.put("http://a.com/robots.txt", Outcome.RULES)
    except ValueError:
        return
    decision = db.explain("http://a.com/x")
    assert decision is not None
    assert decision.allowed is db.allowed("http://a.com/x")


# crawl_delay(url).


def test_crawl_delay_of_a_url() -> None:
    db, _ = make("MyBot/1.0")
    content = "User-agent: MyBot\nCrawl-delay: 7\n\nUser-agent: *\nCrawl-delay: 1\n"
    db.parse("http://a.com/robots.txt", content)
    db.parse("http://b.com/robots.txt", "User-agent: *\nCrawl-delay: 2.5\n")
    db.parse("http://c.com/robots.txt", ROBOTS)
    assert db.crawl_delay("http://a.com/anything") == 7
    assert db.crawl_delay("http://b.com/") == 2.5
    assert db.crawl_delay("http://c.com/") is None
    assert db.crawl_delay("http://unknown.com/") is None


def test_crawl_delay_of_an_origin_without_a_file_is_none() -> None:
    db, _ = make()
    db.put("http://a.com/robots.txt", Outcome.ALLOW_ALL, status=404)
    assert db.crawl_delay("http://a.com/") is None


# URLs with no origin.


@pytest.mark.parametrize(
    "url", ["not a url", "/just/a/path", "", "http://a:99999/", "http://[::1/"]
)
def test_url_without_origin_raises_a_readable_error(url: str) -> None:
    db, _ = make()
    for call in (db.allowed, db.explain, db.crawl_delay):
        with pytest.raises(ValueError, match="cannot tell the origin of") as info:
            call(url)
        assert repr(url) in str(info.value)
    with pytest.raises(ValueError, match="cannot tell the origin of"):
        db.parse(url, ROBOTS)
