"""Random robots.txt documents and URLs, and the check that the engine agrees with
the reference parser on them."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import strategies as st

from tests.helpers.reference import (
    AGENT_MATCHES,
    PRECEDENCES,
    read_lines,
    reference_allowed,
    reference_crawl_delay,
    reference_deciding_rule,
)

# More examples for a longer bug hunt:
# ROBOTRULES_FUZZ_SCALE=20 pytest tests/engine/robots/test_differential.py
SCALE = int(os.environ.get("ROBOTRULES_FUZZ_SCALE", "1"))


ROBOTS_URLS = [None, "http://example.com/robots.txt", "http://EXAMPLE.com:80/robots.txt"]


KEY_SPELLINGS = {
    "user-agent": [
        "User-agent",
        "user-agent",
        "USER-AGENT",
        "uSeR-aGeNt",
        "useragent",
        "User agent",
    ],
    "allow": ["Allow", "allow", "ALLOW", "aLLoW"],
    "disallow": [
        "Disallow",
        "disallow",
        "DISALLOW",
        "dissallow",
        "dissalow",
        "disalow",
        "diasllow",
        "Disallaw",
    ],
    "crawl-delay": ["Crawl-delay", "crawl-delay", "CRAWL-DELAY", "Crawl delay"],
}


# Only ASCII space, tab, \v and \f are whitespace; \xa0, \x85 and \u3000 are not (SPEC 1).
SEPARATORS = [": ", ":", " : ", ":\t", " :", "\t:\t", ":\x0b", "\x0c: ", ":  ", ":\xa0"]


LEADING = ["", "", "", " ", "\t", "\x0c", "\x85"]


TRAILING = ["", "", "", " ", "\t", " # a comment", "#c", " \x0b", "\u3000"]


# User-agent values (as written in the file) and crawler agent strings.
AGENT_VALUES = [
    "*",
    "FooBot",
    "foobot",
    "FOOBOT",
    "FooBot/1.2",
    "FooBot*",
    "foobot/2 (compatible)",
    "BarBot",
    "barbot",
    "Bar",
    "Foo",
    "ot",
    "Googlebot",
    "Googlebot-Mobile",
    "* extra",
    "\xa0*",
    "FooBot\xa0x",
    # SPEC 3: empty names no crawler in token style, every crawler in substring style.
    "",
    "/1.0",
]


CRAWLER_AGENTS = [
    "FooBot",
    "foobot",
    "FooBot/2.1 (+http://example.com/bot)",
    "FOOBOT extra words",
    "BarBot",
    "Bar",
    "Foo",
    "Googlebot-Mobile",
    "googlebot",
    "OtherBot",
    "FooBot\x85v2",
    "",
]


# Not '1e1', '+2' or '-0': whether those are numbers is left open by the spec.
CRAWL_DELAYS = [
    "1",
    "2.5",
    "0",
    "10",
    "-1",
    "abc",
    "inf",
    "nan",
    ".5",
    "5.",
    "",
    "1,5",
    "1e400",
    "\u0663",
    "1_0",
]


OTHER_LINES = [
    "Sitemap: http://example.com/sitemap.xml",
    "sitemap: /relative.xml",
    "Host: example.com",
    "Request-rate: 1/5",
    "Request-rate: 3/1m 0000-2359",
    "Visit-time: 0600-0845",
    "Noindex: /a",
    "Clean-param: ref /a",
    "Foo: bar",
    "unknown line without colon here",
    "allow",
    # Misspelt keys are still read (and a rule line ends a run of User-agent lines, SPEC 2);
    # 'ſ' is no 's' (ASCII-only case).
    "request rate: 1/5",
    "visit time: 0600-0845",
    "Site-map: /s.xml",
    "sitemaps: /s.xml",
    "Di\u017fallow: /",
    "u\u017fer-agent: FooBot",
    "D\u0130SALLOW: /",
]


# Raw invalid bytes are carried as surrogate escapes and become real bytes.
RAW_BYTES = ["\udce9", "\udcff", "\udc80", "\udcc3"]


# \x1c and \u2028 end a line for str.splitlines(), but not in robots.txt (SPEC 1).
PATTERN_ALPHABET = [*"/ab%2F7e*$?;=é", "ツ", " ", "#", "\x1c", "\u2028", *RAW_BYTES]


PATTERN_PREFIXES = [
    "/",
    "/",
    "/",
    "/",
    "*",
    "",
    "$",
    "http://example.com/",
    "http://EXAMPLE.com:80/",
    "http://example.com:80?",
    "http://EXAMPLE.com:80",
    "http://EXAMPLE.com",
    "https://example.com/",
    "http://other.org/",
    "mailto:",
]


URL_ALPHABET = [*"/ab%2F7e*$?;=é#~", "ツ", " "]


URL_PREFIXES = ["", "", "http://example.com", "https://example.com:8443", "HTTP://Example.COM"]


def spelled(kind: str) -> st.SearchStrategy[str]:
    return st.sampled_from(KEY_SPELLINGS[kind])


def directive_line(key: st.SearchStrategy[str], value: st.SearchStrategy[str]) -> Any:
    """``key: value`` with random whitespace and trailing comment."""
    return st.builds(
        lambda lead, k, sep, v, trail: f"{lead}{k}{sep}{v}{trail}",
        st.sampled_from(LEADING),
        key,
        st.sampled_from(SEPARATORS),
        value,
        st.sampled_from(TRAILING),
    )


def two_word_line(key: st.SearchStrategy[str], value: st.SearchStrategy[str]) -> Any:
    """The tolerated no-colon form: ``disallow /x``."""
    return st.builds(
        lambda k, sep, v: f"{k}{sep}{v}",
        key.filter(lambda k: " " not in k),
        st.sampled_from([" ", "\t", "  "]),
        value.filter(lambda v: v != "" and not any(c in v for c in " \t\x0b\x0c#")),
    )


def _no_empty_query_in_absolute_url(value: str) -> bool:
    # Left open by the spec, so kept out of the random search (see the docstring of
    # tests/helpers/reference.py):
    # the oracle reads 'Disallow: http://example.com/a?' as '/a?' (like 'Disallow: /a?'),
    # the package as '/a'.
    written = value.split("#", 1)[0].rstrip(" ")
    return not (written.startswith(("http", "mailto")) and written.endswith("?"))


patterns = st.builds(
    lambda prefix, rest: prefix + rest,
    st.sampled_from(PATTERN_PREFIXES),
    st.text(alphabet=PATTERN_ALPHABET, max_size=8),
).filter(_no_empty_query_in_absolute_url)


rule_lines = st.one_of(
    directive_line(spelled("allow") | spelled("disallow"), patterns),
    two_word_line(spelled("allow") | spelled("disallow"), patterns),
)


user_agent_lines = st.one_of(
    directive_line(spelled("user-agent"), st.sampled_from(AGENT_VALUES)),
    two_word_line(spelled("user-agent"), st.sampled_from(AGENT_VALUES)),
)


crawl_delay_lines = directive_line(spelled("crawl-delay"), st.sampled_from(CRAWL_DELAYS))


filler_lines = st.one_of(
    st.sampled_from(["", "", " ", "\t", "# comment", "#", "  # User-agent: FooBot"]),
    st.sampled_from(OTHER_LINES),
    st.text(alphabet=[*PATTERN_ALPHABET, ":", "D", "u"], max_size=10),
)


# One group: User-agent lines, then members (rules, Crawl-delay) mixed with filler lines.
groups = st.builds(
    lambda agents, body: agents + body,
    st.lists(user_agent_lines, min_size=1, max_size=3),
    st.lists(st.one_of(rule_lines, rule_lines, crawl_delay_lines, filler_lines), max_size=7),
)


@st.composite
def robots_documents(draw: st.DrawFn) -> str | bytes:
    """A whole robots.txt: str, or bytes when it holds raw bytes (or at random)."""
    lines: list[str] = draw(st.lists(filler_lines | rule_lines, max_size=2))
    for group in draw(st.lists(groups, max_size=4)):
        lines += group
    ends = st.sampled_from(["\n", "\n", "\r\n", "\r"])
    text = "".join(line + draw(ends) for line in lines)
    if draw(st.booleans()) and lines:
        text = text.rstrip("\r\n")
    as_bytes = any(c in text for c in RAW_BYTES) or draw(st.booleans())
    if as_bytes:
        data = text.encode("utf-8", "surrogateescape")
        return (b"\xef\xbb\xbf" + data) if draw(st.booleans()) else data
    return ("\ufeff" + text) if draw(st.booleans()) else text


@st.composite
def urls(draw: st.DrawFn) -> str:
    """An absolute URL or a bare path, from an alphabet like the rules'."""
    prefix = draw(st.sampled_from(URL_PREFIXES))
    if draw(st.integers(0, 9)) == 0:
        path = draw(st.sampled_from(["/robots.txt", "/robots.txt?a=b", "/robots.txt;x", ""]))
    else:
        path = "/" + draw(st.text(alphabet=URL_ALPHABET, max_size=10))
    if prefix == "" and (path.startswith("//") or path == ""):
        prefix = "http://example.com"  # a bare '//x' would be a network-path reference
    return prefix + path


@st.composite
def urls_near(draw: st.DrawFn, values: list[str]) -> str:
    """A URL made from a rule value: '*' filled in, '$' honoured or not, a suffix added.

    Random URLs rarely share a long prefix with a random rule; these do.
    """
    value = draw(st.sampled_from(values))
    filler = st.text(alphabet=URL_ALPHABET, max_size=3).map(lambda t: t.replace("#", ""))
    if value.endswith("$") and draw(st.booleans()):
        value = value[:-1]
    else:
        value += draw(filler)
    pieces = value.split("*")
    url = pieces[0] + "".join(draw(filler) + piece for piece in pieces[1:])
    # A raw byte cannot be in a URL str: the URL names it as %XX.
    url = "".join(f"%{ord(c) - 0xDC00:02X}" if "\udc80" <= c <= "\udcff" else c for c in url)
    if url.startswith("//"):
        url = "http://example.com" + url  # not a bare '//x' (a network-path reference)
    elif not url.startswith(("/", "http")):
        url = "http://example.com/" + url
    return url


def rule_values(content: str | bytes) -> list[str]:
    return [line.value for line in read_lines(content) if line.key in ("allow", "disallow")]


def package_rule(decision: Any) -> tuple[str, str, int] | None:
    rule = decision.rule
    if rule is None:
        return None
    directive = getattr(rule.directive, "value", rule.directive)
    return (str(directive).lower(), rule.pattern, rule.line)


def check_document(
    robots_cls: Any,
    content: str | bytes,
    robots_url: str | None,
    agents: list[str],
    targets: list[str],
) -> None:
    parsed = robots_cls.parse(content, url=robots_url)
    for agent in agents:
        for agent_match in AGENT_MATCHES:
            expected_delay = reference_crawl_delay(content, agent, agent_match)
            got_delay = parsed.crawl_delay(agent, agent_match=agent_match)
            assert got_delay == expected_delay, ("crawl_delay", content, agent, agent_match)
            for url in targets:
                for precedence in PRECEDENCES:
                    where = (content, robots_url, url, agent, precedence, agent_match)
                    expected = reference_allowed(
                        content, url, agent, precedence, agent_match, robots_url
                    )
                    got = parsed.allowed(url, agent, precedence=precedence, agent_match=agent_match)
                    assert got == expected, ("allowed", *where)
                    decision = parsed.explain(
                        url, agent, precedence=precedence, agent_match=agent_match
                    )
                    assert decision.allowed == expected, ("explain.allowed", *where)
                    rule = reference_deciding_rule(
                        content, url, agent, precedence, agent_match, robots_url
                    )
                    if rule is not None:
                        got_rule = package_rule(decision)
                        assert got_rule is not None, ("explain.rule", rule, *where)
                        assert got_rule == rule, ("explain.rule", rule, got_rule, *where)
