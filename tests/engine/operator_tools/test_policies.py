"""``ROBOTRULES_POLICIES``: each kind of policy, its errors, which applies, and the delay kept."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

import pytest

from scrapy_robotrules.engine.operator_tools.site_delays import DelayVerdict, site_delay
from scrapy_robotrules.engine.operator_tools.site_policies import (
    FIELDS,
    MAX_POLICIES,
    Policies,
    Policy,
    PolicyError,
    parse_policies,
)

OWN_ROBOTS = "User-agent: *\nDisallow: /private\nDisallow: http://shop.example.com/abs\n"


def test_every_kind_of_policy_is_read() -> None:
    table = parse_policies(
        {
            "ads.example.com": "ignore",
            "shop.example.com": {"robots_txt": OWN_ROBOTS, "user_agent": "PartnerBot/2.0"},
            "docs.example.com": {"precedence": "First-Match", "agent_match": "substring"},
            "intranet.example.com": {"unauthorized": "disallow", "crawl_delay": 2},
            "slow.example.com": {"max_crawl_delay": 10, "max_crawl_delay_action": "skip"},
            "fast.example.com": {"crawl_delay": False},
            "www.example.com": {},
        }
    )
    assert table.for_host("ads.example.com") == Policy("ads.example.com", ignore=True)
    shop = table.for_host("shop.example.com")
    assert shop is not None
    assert shop.robots_txt == OWN_ROBOTS.encode()
    assert shop.user_agent == "PartnerBot/2.0"
    docs = table.for_host("docs.example.com")
    assert docs == Policy("docs.example.com", precedence="first-match", agent_match="substring")
    intranet = table.for_host("intranet.example.com")
    assert intranet == Policy("intranet.example.com", unauthorized="disallow", crawl_delay=2.0)
    slow = table.for_host("slow.example.com")
    assert slow == Policy("slow.example.com", max_crawl_delay=10.0, max_crawl_delay_action="skip")
    assert table.for_host("fast.example.com") == Policy("fast.example.com", obey_crawl_delay=False)
    assert table.for_host("www.example.com") == Policy("www.example.com")
    assert table.for_host("example.com") is None
    assert len(table) == 7
    assert shop.choose("mybot", "most-specific", "token") == (
        "PartnerBot/2.0",
        "most-specific",
        "token",
    )
    assert docs.choose("mybot", "most-specific", "token") == ("mybot", "first-match", "substring")


def test_the_operators_robots_txt_decides_for_each_origin() -> None:
    shop = parse_policies({"shop.example.com": {"robots_txt": OWN_ROBOTS}}).for_host(
        "shop.example.com"
    )
    assert shop is not None
    robots = shop.robots_for("https://shop.example.com")
    assert robots.url == "https://shop.example.com/robots.txt"
    assert robots.explain("https://shop.example.com/private/x", "bot").reason == (
        "disallowed by Disallow: /private (line 2)"
    )
    # The absolute-URL rule is resolved against the origin it is used for (SPEC 4).
    assert robots.allowed("https://shop.example.com/abs", "bot")
    assert not shop.robots_for("http://shop.example.com").allowed(
        "http://shop.example.com/abs", "bot"
    )
    assert shop.robots_sha256 is not None
    assert len(shop.robots_sha256) == 64
    with pytest.raises(ValueError, match="has no robots_txt"):
        Policy("x.com").robots_for("https://x.com")


def test_descriptions_name_the_pattern_and_what_changes() -> None:
    table = parse_policies(
        {
            "*.example.com": {"robots": "ignore"},
            "a.example.org": {"precedence": "allow-first", "crawl_delay": 1.5},
            "b.example.org": {"robots_txt": b"User-agent: *\nDisallow: /\n"},
            "c.example.org": {"robots": "obey"},
        }
    )
    assert str(table.for_host("x.example.com")) == "policy for *.example.com: ignore"
    assert table.for_url("https://a.example.org/") is not None
    assert [str(table.for_url(f"https://{h}.example.org/")) for h in "abc"] == [
        "policy for a.example.org: precedence allow-first, crawl_delay 1.5 s",
        "policy for b.example.org: robots_txt of the operator's own (26 bytes)",
        "policy for c.example.org: the project settings",
    ]


def test_exact_beats_wildcard_and_the_longer_wildcard_wins() -> None:
    table = parse_policies(
        {
            "*": {"unauthorized": "disallow"},
            "*.example.com": "ignore",
            "*.shop.example.com": {"precedence": "first-match"},
            "shop.example.com": {"agent_match": "substring"},
            "www.shop.example.com": {},
        }
    )

    def pattern(host: str) -> str | None:
        found = table.for_host(host)
        return None if found is None else found.pattern

    assert pattern("www.shop.example.com") == "www.shop.example.com"
    assert pattern("shop.example.com") == "shop.example.com"
    assert pattern("a.b.shop.example.com") == "*.shop.example.com"
    assert pattern("blog.example.com") == "*.example.com"
    assert pattern("example.com") == "*"  # a wildcard names subdomains only
    assert pattern("example.org") == "*"
    assert pattern("Blog.Example.COM.") == "*.example.com"


def test_lookup_by_url_takes_the_host_whatever_scheme_port_and_credentials() -> None:
    table = parse_policies({"*.example.com": "ignore", "[::1]": "ignore", "127.0.0.1": "ignore"})
    for url in (
        "https://user:pw@a.example.com:8443/x?y",
        "http://A.EXAMPLE.com/",
        "http://[::1]:8080/x",
        "http://127.0.0.1:5000/",
    ):
        assert table.for_url(url) is not None, url
    assert table.for_url("http://example.com/") is None
    assert table.for_url("not a url") is None
    assert table.for_url("http://[::2]/") is None


def test_unicode_hosts_are_matched_in_their_ascii_form() -> None:
    table = parse_policies({"*.bücher.example": "ignore"})
    assert table.for_url("https://shop.bücher.example/") is not None
    assert table.for_host("shop.xn--bcher-kva.example") is not None


def test_a_json_object_from_the_command_line_is_read() -> None:
    table = parse_policies(json.dumps({"*.example.com": "ignore"}))
    assert table.for_host("a.example.com") is not None
    assert not parse_policies(None)
    assert not parse_policies({})
    assert not parse_policies("")


@pytest.mark.parametrize(
    ("value", "message", "pattern", "field"),
    [
        ({"x.com": {"precendence": "first-match"}}, "did you mean 'precedence'", "x.com", None),
        ({"x.com": {"precedence": "longest"}}, "one of 'most-specific'", "x.com", "precedence"),
        ({"x.com": {"agent_match": "regex"}}, "'token' or 'substring'", "x.com", "agent_match"),
        ({"x.com": {"unauthorized": "deny"}}, "'allow' or 'disallow'", "x.com", "unauthorized"),
        ({"x.com": {"robots": "skip"}}, "'obey' or 'ignore'", "x.com", "robots"),
        ({"x.com": "skip"}, "'obey' or 'ignore'", "x.com", "robots"),
        ({"x.com": ["ignore"]}, "a dict of policy fields", "x.com", None),
        ({"x.com": {"crawl_delay": "2"}}, "True, False or a number", "x.com", "crawl_delay"),
        ({"x.com": {"crawl_delay": -1}}, "True, False or a number", "x.com", "crawl_delay"),
        ({"x.com": {"crawl_delay": float("inf")}}, "a number", "x.com", "crawl_delay"),
        ({"x.com": {"max_crawl_delay": 1e300}}, "from 0 to 86400", "x.com", "max_crawl_delay"),
        ({"x.com": {"max_crawl_delay": True}}, "from 0 to 86400", "x.com", "max_crawl_delay"),
        ({"x.com": {"max_crawl_delay_action": "wait"}}, "'clamp' or 'skip'", "x.com", None),
        ({"x.com": {"user_agent": ""}}, "a crawler name", "x.com", "user_agent"),
        ({"x.com": {"user_agent": 7}}, "a crawler name", "x.com", "user_agent"),
        ({"x.com": {"robots_txt": 7}}, "str or bytes", "x.com", "robots_txt"),
        ({"x.com": {"robots_txt": "policies/x.txt"}}, "not a file name", "x.com", "robots_txt"),
        (
            {"x.com": {"robots_txt": OWN_ROBOTS, "unauthorized": "disallow"}},
            "no effect with 'robots_txt'",
            "x.com",
            "unauthorized",
        ),
        (
            {"x.com": {"robots": "ignore", "precedence": "first-match"}},
            "no effect with 'robots': 'ignore'",
            "x.com",
            "precedence",
        ),
        ({"https://x.com/": "ignore"}, "not a URL", "https://x.com/", None),
        ({"x.com:8080": "ignore"}, "without a port", "x.com:8080", None),
        ({"a.*.com": "ignore"}, "'*' only as", "a.*.com", None),
        ({"*x.com": "ignore"}, "'*' only as", "*x.com", None),
        ({"a..com": "ignore"}, "is no host name", "a..com", None),
        ({"": "ignore"}, "is no host name", "", None),
        ({"x.com": "ignore", "X.COM.": "obey"}, "names the same hosts as", "X.COM.", None),
        ({"*": "ignore", " * ": "obey"}, "names the same hosts as", " * ", None),
        ({7: "ignore"}, "keys must be a host", None, None),
        ("{not json", "a dict or a JSON object", None, None),
        ([("x.com", "ignore")], "a dict of host patterns", None, None),
    ],
)
def test_errors_name_the_pattern_and_the_field(
    value: object, message: str, pattern: str | None, field: str | None
) -> None:
    with pytest.raises(PolicyError, match=message) as caught:
        parse_policies(value)
    assert isinstance(caught.value, ValueError)
    assert caught.value.pattern == pattern
    if field is not None:
        assert caught.value.field == field
    if pattern:
        assert f"ROBOTRULES_POLICIES[{pattern!r}]" in str(caught.value)


def test_every_field_named_in_the_error_for_an_unknown_one() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policies({"x.com": {"colour": "red"}})
    assert caught.value.field == "colour"
    assert all(name in str(caught.value) for name in FIELDS)


def test_hostile_values_make_short_errors() -> None:
    huge = "a" * 1_000_000
    for value in ({huge: "ignore"}, {"x.com": {"user_agent": huge}}, {"x.com": huge}):
        with pytest.raises(PolicyError) as caught:
            parse_policies(value)
        assert len(str(caught.value)) < 400
    with pytest.raises(PolicyError, match="at most 512000 are read"):
        parse_policies({"x.com": {"robots_txt": "User-agent: *\n" + "#" * 600_000}})


class _Claims(Mapping[str, object]):
    """A mapping that says it holds more policies than any crawl could use."""

    def __getitem__(self, key: str) -> object:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("read before its size was checked")

    def __len__(self) -> int:
        return MAX_POLICIES + 1


def test_a_map_too_large_is_refused_before_it_is_read() -> None:
    with pytest.raises(PolicyError, match="at most 1000000"):
        parse_policies(_Claims())


def test_a_large_map_answers_each_host_by_its_own_pattern() -> None:
    value: dict[str, object] = {f"site{i}.example.com": "ignore" for i in range(50_000)}
    value.update({f"*.zone{i}.example.net": {"precedence": "first-match"} for i in range(50_000)})
    table = parse_policies(value)
    assert len(table) == 100_000
    found = table.for_host("site49999.example.com")
    assert found is not None
    assert found.pattern == "site49999.example.com"
    deep = table.for_host("a.b.c.zone123.example.net")
    assert deep is not None
    assert deep.pattern == "*.zone123.example.net"
    assert table.for_host("site50000.example.com") is None


def test_a_host_of_many_labels_is_answered() -> None:
    table = parse_policies({"*.example.com": "ignore"})
    found = table.for_host("a." * 100_000 + "example.com")
    assert found is not None
    assert found.pattern == "*.example.com"
    assert table.for_host("a." * 100_000 + "example.org") is None


def test_policies_built_directly_refuse_duplicates() -> None:
    with pytest.raises(PolicyError, match="names the same hosts"):
        Policies({"*.x.com": Policy("*.x.com"), "*.X.com": Policy("*.X.com")})


def test_crawl_delay_within_the_maximum_is_kept() -> None:
    assert site_delay(2.0) == DelayVerdict(2.0)
    assert site_delay(None) == DelayVerdict(None)
    assert site_delay(0.0) == DelayVerdict(None)
    assert site_delay(5.0, obey=False) == DelayVerdict(None)


def test_crawl_delay_above_the_maximum_is_clamped_or_skipped() -> None:
    clamped = site_delay(120, maximum=60)
    assert clamped.delay == 60.0
    assert clamped.skip is None
    assert clamped.note == "Crawl-delay 120 s clamped to ROBOTRULES_MAX_CRAWL_DELAY (60 s)"
    skipped = site_delay(120, maximum=60, action="skip")
    assert skipped.delay is None
    assert skipped.skip == (
        "robots.txt asks a Crawl-delay of 120 s, above ROBOTRULES_MAX_CRAWL_DELAY (60 s)"
    )


def test_a_policy_replaces_the_delay_settings_for_its_hosts() -> None:
    table = parse_policies(
        {
            "slow.example.com": {"max_crawl_delay": 10, "max_crawl_delay_action": "skip"},
            "set.example.com": {"crawl_delay": 0.5},
            "free.example.com": {"crawl_delay": False},
            "strict.example.com": {"crawl_delay": True},
        }
    )
    slow = site_delay(30, table.for_host("slow.example.com"), maximum=60)
    assert slow.skip == (
        "robots.txt asks a Crawl-delay of 30 s, above the max_crawl_delay of the policy for"
        " slow.example.com (10 s)"
    )
    assert site_delay(30, table.for_host("other.example.com"), maximum=60) == DelayVerdict(30.0)
    # The policy's own delay is kept as set: the operator chose it, no cap applies.
    assert site_delay(3_600, table.for_host("set.example.com"), maximum=60) == DelayVerdict(
        0.5, None, "policy for set.example.com: crawl_delay 0.5 s"
    )
    free = site_delay(30, table.for_host("free.example.com"))
    assert free == DelayVerdict(None, None, "policy for free.example.com: crawl_delay ignored")
    assert site_delay(30, table.for_host("strict.example.com"), obey=False).delay == 30.0
