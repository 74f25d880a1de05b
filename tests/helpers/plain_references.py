"""The plain references of the engine's fast paths: the one home of them all.

A function of the robots engine written for speed is compared, on
generated inputs, with a plain form of the same work kept here, never in
the package (``tests/engine/robots/test_fast_paths.py`` and
``test_urls.py`` ask both the same questions and require the same
answers). ``benchmarks/fast_paths.py`` puts each in its fast form's place
to count what the fast form saves. Each reference does the work as
directly as it can be said: value by value, run by run, rule by rule;
where the package has a plain form of its own (the one short input
takes), the reference is that form. The package's private helpers are
read from their module at each call, so that a test that counts them
counts the reference's work too.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from scrapy_robotrules.engine.robots import groups, robotstxt, urls
from scrapy_robotrules.engine.robots.agents import AgentMatch, check_agent_match, select
from scrapy_robotrules.engine.robots.decision import is_robots_path
from scrapy_robotrules.engine.robots.precedence import NO_RULE, Precedence, rule_code
from scrapy_robotrules.engine.robots.reading import KEY_NAMES, line_starts, member_line
from scrapy_robotrules.engine.robots.rule_index import Needled
from scrapy_robotrules.engine.robots.star_columns import (
    ENDS,
    FIND,
    ManyStars,
    StarRules,
    no_many,
)
from scrapy_robotrules.engine.robots.urls import normalize, normalize_octets
from scrapy_robotrules.engine.robots.wildcards import WildRule, shape_of

__all__ = [
    "decide",
    "literal",
    "many_escapes",
    "needled_columns",
    "needs_cutting",
    "normalised",
    "normalised_tails",
    "normalize_long",
    "path_of",
    "read_rules",
    "request_path",
    "selected",
]


# urls


def literal(octets: bytes) -> str:
    """Of ``urls._literal``: each run to encode encoded by a regex callback, as short input is."""
    return urls._LITERAL_RUN.sub(urls._encode_match, octets).decode("ascii")


def normalize_long(octets: bytes) -> str:
    """Of ``urls._normalize_long``: run by run, as short input is."""
    return urls._OCTET_WORK.sub(urls._octets, octets).decode("ascii")


def many_escapes(octets: bytes) -> str:
    """Of ``urls._many_escapes``: escape by escape, as input of a few escapes is."""
    return urls._by_escapes(octets)


def request_path(url: str) -> str:
    """Of ``urls.request_path``: the URL read every time it is asked, none kept."""
    return urls._path_of(url)


def path_of(url: str) -> str:
    """Of ``urls._path_of``: path and query cut out, then normalised, as an unclean URL is."""
    path = urls.url_path_and_query(url)
    if path[:1] != "/":
        path = "/" + path
    return normalize(path)


# star_columns


def needs_cutting(rules: StarRules) -> bool:
    """Of ``star_columns.needs_cutting``: value by value."""
    return any(b"%" in head or not head.isascii() for head in rules.prefixes) or any(
        b"*" in tail or b"%" in tail or not tail.isascii() for tail in rules.pieces
    )


def normalised(values: list[bytes]) -> list[bytes]:
    """Of ``star_columns._normalised``: value by value."""
    return [normalize_octets(value) for value in values]


def normalised_tails(tails: list[bytes], counts: list[int]) -> list[str]:
    """Of ``star_columns._normalised_tails``: piece by piece."""
    texts = (tail.decode("utf-8", "surrogateescape") for tail in tails)
    return ["*".join(normalize(piece) for piece in text.split("*")) for text in texts]


# rule_index


def needled_columns(
    wild: list[WildRule], stars: Sequence[StarRules], many: Sequence[ManyStars]
) -> tuple[Needled, list[StarRules], list[ManyStars]]:
    """Of ``rule_index._needled_columns``: rule by rule."""
    columns = Needled([], array("i"), [], bytearray(), [])

    def add(needle: str, code: int, priority: int, shape: int, prefix: str) -> None:
        columns.needles.append(needle)
        columns.codes.append(code)
        columns.priorities.append(priority)
        columns.shapes.append(shape)
        columns.prefixes.append(prefix)

    for line, allow, pattern in wild:
        shape = shape_of(pattern)[0]
        add(pattern.needle, rule_code(line, allow), pattern.priority, shape, pattern.prefix)
    rest: list[StarRules] = []
    for group in stars:
        for line, allow, head, star, piece, anchor in zip(*group, strict=True):
            if piece:
                # The pattern's length, "*" and "$" counting one (SPEC 5).
                priority = len(head) + len(star) + len(piece) + len(anchor)
                shape = ENDS if anchor else FIND
                add(piece.decode("ascii"), rule_code(line, allow), priority, shape, head.decode())
        left = [not piece for piece in group.pieces]
        if any(left):
            rest.append(group.picked(left))
    rest_many: list[ManyStars] = []
    for rules in many:
        for line, allow, prefix, needle, priority, shape, _, _ in zip(*rules, strict=True):
            if needle:
                add(needle, rule_code(line, allow), priority, shape, prefix)
        left = [not needle for needle in rules.needles]
        if any(left):
            rest_many.append(rules.picked(left))
    return columns, rest, rest_many


# groups


def read_rules(body: bytes, body_line: int, robots_url: str | None) -> groups.GroupRules:
    """Of ``groups.read_rules``: line by line, each value compiled alone."""
    allow: tuple[list[bytes], list[int]] = ([], [])
    disallow: tuple[list[bytes], list[int]] = ([], [])
    wild: list[WildRule] = []
    for offset, start in enumerate(line_starts(body)):
        found = member_line(body, start)
        if found is None:
            continue
        key, written = found
        name = KEY_NAMES[key.lower()]
        if name not in ("allow", "disallow") or not written:
            continue  # SPEC 4: an empty value is no rule at all.
        matcher = groups._rule_pattern(written, robots_url)
        if matcher is None:
            continue
        line, is_allow = body_line + offset, name == "allow"
        if isinstance(matcher, str):
            values, codes = allow if is_allow else disallow
            values.append(matcher.encode())  # normalised: ASCII
            codes.append(rule_code(line, is_allow))
        else:
            wild.append((line, is_allow, matcher))
    return groups.GroupRules(allow, disallow, wild, StarRules([], [], [], [], [], []), no_many())


# robotstxt: methods of RobotsTxt, written as functions of the file


def decide(
    robots: robotstxt.RobotsTxt,
    path: str,
    agent: str,
    precedence: Precedence,
    agent_match: AgentMatch,
) -> int:
    """Of ``RobotsTxt._decide``: the view's key and the ``/robots.txt`` test by their functions."""
    index = robots._views.get(robotstxt._view_key(agent, precedence, agent_match))
    if index is None:
        index = robots._index(agent, precedence, agent_match)
    if is_robots_path(path):
        return NO_RULE
    last = robots._last
    if last[0] is index and last[1] == path:
        return last[2]
    code = index.decide(path)
    robots._last = (index, path, code)
    return code


def selected(robots: robotstxt.RobotsTxt, agent: str, agent_match: AgentMatch) -> tuple[int, ...]:
    """Of ``RobotsTxt._selected``: :func:`.select` over each group's tokens."""
    return select(robots._tokens(), agent, check_agent_match(agent_match))
