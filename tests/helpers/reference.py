"""A deliberately simple reference implementation of SPEC.md sections 1-6.

This module is a test oracle, written for clarity and not for speed.  It shares
no code with ``scrapy_robotrules``: every step of the spec is spelled out again
here, one small function per rule, so that the differential tests compare two
independent readings of the same text.

Choices this oracle makes where the spec leaves room (kept in one place so a
disagreement with the package is easy to trace):

- A ``User-agent`` line with an empty value (or a value whose product token is
  empty) names no crawler in ``token`` style; in ``substring`` style the empty
  name is a substring of every crawler's token (the empty token included), so
  that group applies to every crawler when it comes first.
- Any ``Allow``/``Disallow`` line ends the run of ``User-agent`` lines for the
  grouping rule of SPEC 2, whatever its value (an empty ``Disallow:`` too);
  ``Crawl-delay``/``Request-rate``/``Visit-time`` lines, whatever their value,
  never end it and belong to the group they stand in.
- Several ``Crawl-delay`` values that apply (in one group or in merged groups):
  the largest valid one wins.
- When several matching rules tie for the decision, the deciding rule is the
  first of them in file order (``most-specific``: the first ``Allow`` of the
  longest length, else the first ``Disallow`` of that length; ``allow-first``:
  the first matching ``Allow``, else the first matching ``Disallow``).
- The 512,000-byte limit is applied to the UTF-8 bytes of a ``str`` too; the line
  running over the limit is dropped, unless only its CR/LF lies beyond the limit.
- The crawler's agent string is trimmed of leading whitespace before its product
  token is taken (``" FooBot"`` is ``foobot``, not the empty token).
- A ``?`` with nothing after it is kept in the matched path+query (``/a?``), also in
  an absolute-URL rule (``Disallow: http://host/a?`` is ``/a?``).
- ``User-agent: **`` is not the wildcard group (only one trailing ``*`` is dropped,
  leaving the token ``*``).
- ``Crawl-delay`` takes an ASCII decimal number with optional sign and exponent
  (``1``, ``2.5``, ``.5``, ``5.``, ``+2``, ``1e1``); ``-0`` counts as ``0``.
- A URL is absolute when it starts with ``scheme://``; anything else is a bare path,
  so ``//a/b`` is the path ``//a/b``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

MAX_BYTES = 512_000
UTF8_BOM = b"\xef\xbb\xbf"

# SPEC 1: whitespace is ASCII space, tab, vertical tab and form feed.
WHITESPACE = " \t\v\f"
_WHITESPACE_RUN = re.compile("[ \t\v\f]+")
_LINE_BREAK = re.compile("\r\n|\r|\n")

PRECEDENCES = ("most-specific", "first-match", "allow-first")
AGENT_MATCHES = ("token", "substring")

# SPEC 1: accepted keys, with the tolerated misspellings, mapped to one name.
KEYS: dict[str, str] = {
    "user-agent": "user-agent",
    "useragent": "user-agent",
    "user agent": "user-agent",
    "allow": "allow",
    "disallow": "disallow",
    "dissallow": "disallow",
    "dissalow": "disallow",
    "disalow": "disallow",
    "diasllow": "disallow",
    "disallaw": "disallow",
    "crawl-delay": "crawl-delay",
    "crawl delay": "crawl-delay",
    "request-rate": "request-rate",
    "request rate": "request-rate",
    "visit-time": "visit-time",
    "visit time": "visit-time",
    "sitemap": "sitemap",
    "site-map": "sitemap",
    "sitemaps": "sitemap",
    "host": "host",
}

# SPEC 2: the lines that are members of a group, and those that end its User-agent run.
MEMBER_KEYS = ("allow", "disallow", "crawl-delay", "request-rate", "visit-time")
RULE_KEYS = ("allow", "disallow")

# SPEC 4: percent-encoding classes (RFC 3986).
UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
RESERVED = frozenset(b":/?#[]@!&'()+,;=")
HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")

DEFAULT_PORTS = {"http": 80, "https": 443}
_ABSOLUTE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_URL_WITH_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


# --------------------------------------------------------------------------
# SPEC 1: reading the file


def ascii_lower(text: str) -> str:
    """Lower-case A-Z only (no Unicode case mapping)."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def to_text(content: str | bytes) -> str:
    """Bytes -> text: drop the BOM, keep 512,000 bytes, keep invalid bytes as surrogates."""
    if isinstance(content, str):
        data = content.encode("utf-8", "surrogateescape")
    else:
        data = bytes(content)
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    if len(data) > MAX_BYTES:
        # The line running over the limit is cut, unless only its line break is beyond it.
        line_is_cut = data[MAX_BYTES] not in b"\r\n"
        data = data[:MAX_BYTES]
        if line_is_cut:
            last_break = max(data.rfind(b"\r"), data.rfind(b"\n"))
            data = data[: last_break + 1]
    return data.decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Line:
    number: int  # 1-based
    key: str  # one of the values of KEYS
    value: str  # trimmed


def split_key_value(line: str) -> tuple[str, str] | None:
    """One line without its comment -> (key, value), or None when it is not a directive."""
    if ":" in line:
        key, value = line.split(":", 1)
        return key.strip(WHITESPACE), value.strip(WHITESPACE)
    words = [word for word in _WHITESPACE_RUN.split(line) if word]
    if len(words) == 2:
        return words[0], words[1]
    return None


def read_lines(content: str | bytes) -> list[Line]:
    """The known directive lines of a robots.txt file, in file order."""
    lines = []
    for number, raw in enumerate(_LINE_BREAK.split(to_text(content)), start=1):
        without_comment = raw.split("#", 1)[0]
        pair = split_key_value(without_comment)
        if pair is None:
            continue
        key = KEYS.get(ascii_lower(pair[0]))
        if key is None:
            continue  # unknown key: ignored
        lines.append(Line(number, key, pair[1]))
    return lines


# --------------------------------------------------------------------------
# SPEC 2: groups


@dataclass(frozen=True)
class Rule:
    directive: str  # "allow" or "disallow"
    value: str  # as written, trimmed
    line: int


@dataclass
class Group:
    wildcard: bool = False
    tokens: list[str] = field(default_factory=list)  # reduced, lower-cased, non-wildcard
    has_rules: bool = False  # a rule line ends the run of User-agent lines
    rules: list[Rule] = field(default_factory=list)
    crawl_delays: list[float] = field(default_factory=list)


def product_token(agent: str) -> str:
    """The agent string (leading whitespace trimmed) up to the first '/' or whitespace."""
    token = ""
    for char in agent.lstrip(WHITESPACE):
        if char == "/" or char in WHITESPACE or char in "\r\n":
            break
        token += char
    return token


def parse_crawl_delay(value: str) -> float | None:
    if _FLOAT.fullmatch(value) is None:
        return None
    delay = float(value)
    if not math.isfinite(delay) or delay < 0:
        return None
    return delay


@lru_cache(maxsize=64)  # only to keep the differential tests fast; groups are never mutated
def parse_groups(content: str | bytes) -> list[Group]:
    return build_groups(read_lines(content))


def build_groups(lines: list[Line]) -> list[Group]:
    groups: list[Group] = []
    current: Group | None = None
    for line in lines:
        if line.key == "user-agent":
            if current is None or current.has_rules:
                current = Group()
                groups.append(current)
            token = product_token(line.value)
            if token == "*":
                current.wildcard = True
            else:
                current.tokens.append(ascii_lower(token.removesuffix("*")))
        elif line.key in MEMBER_KEYS:
            if current is None:
                continue  # members before the first User-agent are ignored
            if line.key in RULE_KEYS:
                current.has_rules = True
                current.rules.append(Rule(line.key, line.value, line.number))
            elif line.key == "crawl-delay":
                delay = parse_crawl_delay(line.value)
                if delay is not None:
                    current.crawl_delays.append(delay)
        # sitemap, host: file-wide, they do not touch groups
    return groups


# --------------------------------------------------------------------------
# SPEC 3: agent matching


def applicable_groups(groups: list[Group], agent: str, agent_match: str) -> list[Group]:
    token = ascii_lower(product_token(agent))
    if agent_match == "token":
        chosen = [g for g in groups if token != "" and token in g.tokens]
    elif agent_match == "substring":
        chosen = []
        for group in groups:
            # An empty value is a substring of every token (WWW::RobotRules, urllib).
            if any(value in token for value in group.tokens):
                chosen = [group]
                break
    else:
        raise ValueError(f"unknown agent_match {agent_match!r}")
    if not chosen:
        chosen = [g for g in groups if g.wildcard]
    return chosen


# --------------------------------------------------------------------------
# SPEC 4: patterns and URLs


def normalise(text: str) -> str:
    """Percent-normalise octet by octet (the str is UTF-8 encoded first)."""
    data = text.encode("utf-8", "surrogateescape")
    out = []
    i = 0
    while i < len(data):
        octet = data[i]
        if octet == ord("%"):
            if i + 2 < len(data) and data[i + 1] in HEX_DIGITS and data[i + 2] in HEX_DIGITS:
                decoded = int(data[i + 1 : i + 3], 16)
                out.append(chr(decoded) if decoded in UNRESERVED else f"%{decoded:02X}")
                i += 3
                continue
            out.append("%25")
        elif octet in UNRESERVED or octet in RESERVED:
            out.append(chr(octet))
        else:
            out.append(f"%{octet:02X}")
        i += 1
    return "".join(out)


def url_path_query(url: str) -> str:
    """Path (empty -> '/'), ;params and ?query of an absolute URL or bare path; no fragment."""
    url = url.split("#", 1)[0]
    if _URL_WITH_AUTHORITY.match(url):
        after_scheme = url[url.index("//") + 2 :]
        end_of_authority = len(after_scheme)
        for delimiter in "/?":
            position = after_scheme.find(delimiter)
            if position != -1:
                end_of_authority = min(end_of_authority, position)
        url = after_scheme[end_of_authority:]
    if not url.startswith("/"):
        url = "/" + url
    return url


def origin(url: str) -> tuple[str, str, int | None] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if port is None:
        port = DEFAULT_PORTS.get(scheme)
    return scheme, parts.hostname or "", port


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str] | None  # None: never matches
    length: int  # octets of the normalised pattern, '*' and final '$' one each

    def matches(self, normalised_url: str) -> bool:
        return self.regex is not None and self.regex.match(normalised_url) is not None


def compile_pattern(value: str, robots_url: str | None) -> Pattern | None:
    """A rule value -> Pattern, or None when the value is no rule at all."""
    if value == "":
        return None  # an empty value is no rule
    path = value
    if _ABSOLUTE_URL.match(value):
        rule_origin = origin(value)
        if robots_url is None or rule_origin is None or rule_origin != origin(robots_url):
            return None  # other origin, or robots.txt URL unknown: ignored
        path = url_path_query(value)
    if not path.startswith(("/", "*")):
        return Pattern(None, 0)  # kept, never matches
    anchored = path.endswith("$")
    if anchored:
        path = path[:-1]
    pieces = [normalise(piece) for piece in path.split("*")]
    length = sum(len(piece) for piece in pieces) + (len(pieces) - 1) + (1 if anchored else 0)
    regex = ".*".join(re.escape(piece) for piece in pieces) + (r"\Z" if anchored else "")
    return Pattern(re.compile(regex, re.DOTALL), length)


def is_robots_txt(url: str) -> bool:
    path = url_path_query(url).split("?", 1)[0]
    return normalise(path) == "/robots.txt"


def reference_rule_matches(value: str, url: str, robots_url: str | None = None) -> bool:
    """Does one rule value match the URL (ignoring the /robots.txt exemption)?"""
    pattern = compile_pattern(value, robots_url)
    return pattern is not None and pattern.matches(normalise(url_path_query(url)))


# --------------------------------------------------------------------------
# SPEC 5: precedence


def pick_deciding_rule(matching: list[tuple[Rule, Pattern]], precedence: str) -> Rule | None:
    if precedence not in PRECEDENCES:
        raise ValueError(f"unknown precedence {precedence!r}")
    if not matching:
        return None
    if precedence == "first-match":
        return matching[0][0]
    if precedence == "allow-first":
        allows = [rule for rule, _ in matching if rule.directive == "allow"]
        return allows[0] if allows else matching[0][0]
    longest = max(pattern.length for _, pattern in matching)
    top = [rule for rule, pattern in matching if pattern.length == longest]
    allows = [rule for rule in top if rule.directive == "allow"]
    return allows[0] if allows else top[0]


# --------------------------------------------------------------------------
# Public entry points


def _check_modes(precedence: str, agent_match: str) -> None:
    if precedence not in PRECEDENCES:
        raise ValueError(f"unknown precedence {precedence!r}")
    if agent_match not in AGENT_MATCHES:
        raise ValueError(f"unknown agent_match {agent_match!r}")


def _matching_rules(
    content: str | bytes,
    url: str,
    agent: str,
    agent_match: str,
    robots_url: str | None,
) -> list[tuple[Rule, Pattern]]:
    """The rules of the applicable groups that match the URL, in file order."""
    target = normalise(url_path_query(url))
    matching = []
    for group in applicable_groups(parse_groups(content), agent, agent_match):
        for rule in group.rules:
            pattern = compile_pattern(rule.value, robots_url)
            if pattern is not None and pattern.matches(target):
                matching.append((rule, pattern))
    return matching


def _deciding_rule(  # noqa: PLR0917 (the oracle mirrors the vector fields)
    content: str | bytes,
    url: str,
    agent: str,
    precedence: str,
    agent_match: str,
    robots_url: str | None,
) -> Rule | None:
    _check_modes(precedence, agent_match)
    if is_robots_txt(url):
        return None
    matching = _matching_rules(content, url, agent, agent_match, robots_url)
    return pick_deciding_rule(matching, precedence)


def reference_matching_rules(
    content: str | bytes,
    url: str,
    agent: str,
    agent_match: str,
    robots_url: str | None = None,
) -> list[tuple[str, str, int]]:
    """(directive, pattern as written, line) of every rule that matches the URL."""
    _check_modes(PRECEDENCES[0], agent_match)
    matching = _matching_rules(content, url, agent, agent_match, robots_url)
    return [(rule.directive, rule.value, rule.line) for rule, _ in matching]


def reference_deciding_rule(  # noqa: PLR0917 (the oracle mirrors the vector fields)
    content: str | bytes,
    url: str,
    agent: str,
    precedence: str,
    agent_match: str,
    robots_url: str | None = None,
) -> tuple[str, str, int] | None:
    """(directive, pattern as written, 1-based line) of the deciding rule, or None."""
    rule = _deciding_rule(content, url, agent, precedence, agent_match, robots_url)
    return None if rule is None else (rule.directive, rule.value, rule.line)


def reference_allowed(  # noqa: PLR0917 (the oracle mirrors the vector fields)
    content: str | bytes,
    url: str,
    agent: str,
    precedence: str,
    agent_match: str,
    robots_url: str | None = None,
) -> bool:
    rule = _deciding_rule(content, url, agent, precedence, agent_match, robots_url)
    return rule is None or rule.directive == "allow"


def reference_crawl_delay(content: str | bytes, agent: str, agent_match: str) -> float | None:
    _check_modes(PRECEDENCES[0], agent_match)
    groups = applicable_groups(parse_groups(content), agent, agent_match)
    delays = [delay for group in groups for delay in group.crawl_delays]
    return max(delays) if delays else None
