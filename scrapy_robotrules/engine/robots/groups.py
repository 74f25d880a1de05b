"""One group of a robots.txt file: its ``User-agent`` lines, and its members read on first use.

SPEC 2 (what a group holds), SPEC 4 (a rule's value: empty or never
matching values are no rule) and SPEC 6 (``Crawl-delay``, ``Request-rate``,
``Visit-time`` per group). A group's member lines stay bytes until a
crawler first asks for it; its rules are then read in columns, sorted by
kind in C, for :class:`.RuleIndex` to be built from and then dropped.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable
from itertools import compress
from operator import itemgetter
from typing import Any, NamedTuple, cast

from scrapy_robotrules.engine.robots.agents import group_token
from scrapy_robotrules.engine.robots.pacing_lines import (
    RequestRate,
    UtcWindow,
    parse_crawl_delay,
    parse_request_rate,
    parse_window,
)
from scrapy_robotrules.engine.robots.patterns import (
    Pattern,
    compile_matcher,
    resolve_value,
    simple_values,
)
from scrapy_robotrules.engine.robots.precedence import PlainRules, rule_code
from scrapy_robotrules.engine.robots.reading import (
    KEY_NAMES,
    MEMBER_FIELDS,
    RawGroup,
    count_unknown,
    decode_value,
    extra_items,
    line_starts,
    member_columns,
    member_line,
)
from scrapy_robotrules.engine.robots.star_columns import (
    ManyStars,
    StarRules,
    cut_starred,
    needs_cutting,
    no_many,
)
from scrapy_robotrules.engine.robots.wildcards import WildRule

__all__ = ["AgentLine", "Extras", "Group", "GroupRules", "read_rules"]


class AgentLine(NamedTuple):
    """A ``User-agent`` line: its value as written and its line number."""

    value: str
    line: int


_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_TRAILING_BLANKS = re.compile(r"[ \t\v\f]+(?=\n|\Z)")
# The spellings nearly every file uses, looked up as written.
_COMMON_KEYS = {
    spelling.encode(): KEY_NAMES[spelling.lower()]
    for spelling in ("Disallow", "Allow", "disallow", "allow", "DISALLOW", "ALLOW")
}


class GroupRules(NamedTuple):
    """A group's rules as read: what an index is built from, then dropped."""

    allow: PlainRules
    disallow: PlainRules
    wild: list[WildRule]
    stars: StarRules
    many: ManyStars
    """Rules of several stars, read in bulk (see :mod:`.star_columns`)."""


def _rule_pattern(written: str, robots_url: str | None) -> str | Pattern | None:
    """A rule value's matcher (``None``: the rule is ignored), as :func:`compile_matcher` says."""
    resolved = resolve_value(written, robots_url)
    return None if resolved is None else compile_matcher(resolved)


def read_rules(body: bytes, body_line: int, robots_url: str | None) -> GroupRules:
    """The rules of a group's member text ``body``, whose first line is ``body_line``.

    Every line cut by one regex into columns (:func:`.member_columns`),
    sorted by kind in C, with Python work only for the values that need it.
    A fast path: its plain reference, line by line, each value compiled
    alone, is in ``tests/helpers/plain_references.py``.
    """
    # The hot loop of a first question to a large file: plain values used
    # as they are when they need no normalising, and sorted by kind as they
    # come, in C (compress); only the other member lines go through Python.
    columns = member_columns(body)
    stride = MEMBER_FIELDS + 1
    count = len(columns) // stride
    if not count:
        return GroupRules(([], []), ([], []), [], StarRules([], [], [], [], [], []), no_many())
    lines = range(body_line, body_line + count)
    # A column holds None where a line took another branch of the pattern;
    # those of the plain values are taken whole (they are most lines). The
    # star rules' columns and the general values are only gathered at the
    # lines whose key column is set (few, most often none): a strided copy
    # of a column costs a pass over every line of the group.
    disallows, allows, star_keys, keys = cast(
        "list[list[bytes | None]]", [columns[field::stride] for field in (1, 2, 3, 8)]
    )
    # Rule codes (line * 2 + allow) straight from ranges, in C.
    first, end = body_line * 2, (body_line + count) * 2
    disallow_values = cast("list[bytes]", list(filter(None, disallows)))
    disallow_codes: list[int] = list(compress(range(first, end, 2), disallows))
    allow_values = cast("list[bytes]", list(filter(None, allows)))
    allow_codes: list[int] = list(compress(range(first + 1, end, 2), allows))
    wild: list[WildRule] = []
    if any(star_keys):
        # The groups of a star rule follow its key: (prefix, star, piece, anchor).
        cut = _gather(columns, star_keys, 3, 4)
        starred = StarRules(
            list(compress(lines, star_keys)),
            # Whether each allows: its key starts with "a" or "A".
            [key[:1] in (b"a", b"A") for key in star_keys if key],
            *cast("list[list[bytes]]", cut),
        )
    else:
        starred = StarRules([], [], [], [], [], [])
    read_apart = False
    many = no_many()
    if starred.lines and needs_cutting(starred):
        # Escapes, non-ASCII or several stars: normalised and cut in bulk.
        starred, many, plain = cut_starred(starred)
        for line, is_allow, prefix in plain:
            values_of, codes_of = (
                (allow_values, allow_codes) if is_allow else (disallow_values, disallow_codes)
            )
            values_of.append(prefix)
            codes_of.append(rule_code(line, is_allow))
            read_apart = True
    rest: list[list[Any]] = [[], [], [], []]
    if any(keys):
        # (line, key, value, value2) of the other member lines.
        rest = [
            list(compress(lines, keys)),
            list(filter(None, keys)),
            *_gather(columns, keys, 8, 2),
        ]
    if len(rest[1]) >= _BULK:
        left, apart = _read_in_bulk(
            rest, starred, (allow_values, allow_codes), (disallow_values, disallow_codes)
        )
        read_apart = read_apart or apart
        rest = [list(compress(column, left)) for column in rest]
    others: Iterable[tuple[int, bytes, bytes, bytes]] = zip(*rest, strict=True)
    for line, key, value, value2 in others:
        name = _COMMON_KEYS.get(key) or KEY_NAMES[key.decode("ascii").lower()]
        if name not in ("disallow", "allow"):
            continue  # Crawl-delay and the like: see Extras.
        raw_value = value if value is not None else value2
        if raw_value is None:
            continue  # never so: the pattern sets one of the two
        written = decode_value(raw_value)
        if not written:
            continue  # SPEC 4: an empty value is no rule at all.
        # A value that can never match (SPEC 4) is no matcher: it can never
        # decide, so explain() never has to name it.
        matcher = _rule_pattern(written, robots_url)
        if matcher is None:
            continue
        allow = name == "allow"
        if isinstance(matcher, str):
            read_apart = True
            prefix = matcher.encode()  # normalised: ASCII
            if allow:
                allow_values.append(prefix)
                allow_codes.append(rule_code(line, allow))
            else:
                disallow_values.append(prefix)
                disallow_codes.append(rule_code(line, allow))
        else:
            wild.append((line, allow, matcher))
    if read_apart:
        # Rules read one by one came after the regex-built ones: restore
        # file order, which ranks and ties depend on.
        allow_codes, allow_values = _in_file_order(allow_codes, allow_values)
        disallow_codes, disallow_values = _in_file_order(disallow_codes, disallow_values)
    return GroupRules(
        (allow_values, allow_codes), (disallow_values, disallow_codes), wild, starred, many
    )


def _gather(
    columns: list[bytes | None], keys: list[bytes | None], field: int, width: int
) -> list[list[bytes | None]]:
    """The ``width`` columns after ``field`` (a key column) at the lines whose key is set.

    Fetched one by one where such lines are few (a strided copy passes over
    every line of the group, about a seventh of the cost of a fetch), else
    copied whole and sorted out.
    """
    stride = MEMBER_FIELDS + 1
    at = list(compress(range(field, len(columns), stride), keys))
    if len(at) * 8 < len(keys):
        return [[columns[i + k] for i in at] for k in range(1, width + 1)]
    return [list(compress(columns[k::stride], keys)) for k in range(field + 1, field + width + 1)]


# From this many rule lines the fast regex did not cut (escapes, non-ASCII),
# they are read in bulk (see _read_in_bulk).
_BULK = 64


def _read_in_bulk(
    columns: list[list[Any]],
    starred: StarRules,
    allow: tuple[list[bytes], list[int]],
    disallow: tuple[list[bytes], list[int]],
) -> tuple[list[bool], bool]:
    """Rules of plain characters around one ``*`` at most, with escapes or non-ASCII, in bulk.

    Read one value at a time, a hostile file of tens of thousands of
    ``Disallow: /*%7e<letters>%2f`` costs a Python call per rule. Lines with
    a common spelling of ``Allow`` or ``Disallow`` (``columns``: lines, keys,
    values, values2) are decoded,
    cut and normalised together (:func:`.simple_values`) and join
    ``starred`` or the plain rules, with no Python call per rule. Returns
    which lines are left to read one by one, and whether plain rules were
    added out of file order.
    """
    lines, keys, values, values2 = columns
    common = [key in _COMMON_KEYS for key in keys]
    # One of a line's two value groups is empty: their sum is the value.
    # Of a line's two value groups one is set (the other None or empty).
    pairs = zip(compress(values, common), compress(values2, common), strict=True)
    raw = b"\n".join([a or b or b"" for a, b in pairs])
    texts = _TRAILING_BLANKS.sub("", raw.decode("utf-8", "surrogateescape")).split("\n")
    heads, stars, pieces, anchors = simple_values(texts)
    simple = iter([bool(head) for head in heads])
    # Per line: read in bulk (a common key and a simple value), or left.
    done = [is_common and next(simple) for is_common in common]
    left = [not it for it in done]
    if not any(done):
        return left, False
    lines = list(compress(lines, done))
    allows = [key[:1] in (b"a", b"A") for key in compress(keys, done)]
    kept = [bool(head) for head in heads]
    heads, stars, pieces, anchors = (
        list(compress(c, kept)) for c in (heads, stars, pieces, anchors)
    )
    # A star or an anchor makes a wildcard rule; else it is a plain prefix.
    wild = [bool(star or anchor) for star, anchor in zip(stars, anchors, strict=True)]
    starred.lines.extend(compress(lines, wild))
    starred.allows.extend(compress(allows, wild))
    starred.prefixes.extend(map(str.encode, compress(heads, wild)))
    starred.stars.extend(map(str.encode, compress(stars, wild)))
    starred.pieces.extend(map(str.encode, compress(pieces, wild)))
    starred.anchors.extend(map(str.encode, compress(anchors, wild)))
    read_apart = False
    for line, is_allow, head, is_wild in zip(lines, allows, heads, wild, strict=True):
        if is_wild:
            continue
        values_of, codes_of = allow if is_allow else disallow
        values_of.append(head.encode())
        codes_of.append(rule_code(line, is_allow))
        read_apart = True
    return left, read_apart


def _in_file_order(codes: list[int], values: list[bytes]) -> tuple[list[int], list[bytes]]:
    pairs = sorted(zip(codes, values, strict=True))
    return list(map(_FIRST, pairs)), list(map(_SECOND, pairs))


class Extras:
    """A group's Crawl-delay, Request-rate and Visit-time lines, read."""

    __slots__ = ("crawl_delay", "request_rates", "visit_times")

    def __init__(self, raw: RawGroup) -> None:
        self.crawl_delay: float | None = None
        self.request_rates: list[RequestRate] = []
        self.visit_times: list[UtcWindow] = []
        for key, written in extra_items(raw.body):
            name = KEY_NAMES[key.lower()]
            if name == "crawl-delay":
                delay = parse_crawl_delay(written)
                if delay is not None and (self.crawl_delay is None or delay > self.crawl_delay):
                    self.crawl_delay = delay
            elif name == "request-rate":
                rate = parse_request_rate(written)
                if rate is not None:
                    self.request_rates.append(rate)
            elif name == "visit-time":
                window = parse_window(written)
                if window is not None:
                    self.visit_times.append(window)


class Group:
    """One group: its ``User-agent`` lines, and its members, read on first use.

    The rules are read into an index (see :class:`.RuleIndex`), which keeps
    each rule's line number, not its text: the text is read again from the
    group when a rule must be shown or re-compiled.
    """

    __slots__ = ("_extras", "_raw", "_starts", "tokens")

    def __init__(self, raw: RawGroup) -> None:
        self._raw = raw
        self.tokens: tuple[str, ...] = tuple([group_token(value) for value, _ in raw.agents])
        self._extras: Extras | None = None
        self._starts: array[int] | None = None

    @property
    def user_agents(self) -> tuple[AgentLine, ...]:
        """The group's ``User-agent`` lines: value as written, line number."""
        return tuple(AgentLine(value, line) for value, line in self._raw.agents)

    @property
    def line(self) -> int:
        """Line of the group's first ``User-agent``."""
        return self._raw.agents[0][1]

    def unknown_lines(self) -> int:
        return count_unknown(self._raw.body)

    def rules(self, robots_url: str | None) -> GroupRules:
        return read_rules(self._raw.body, self._raw.body_line, robots_url)

    def extras(self) -> Extras:
        if self._extras is None:
            self._extras = Extras(self._raw)
        return self._extras

    def holds(self, line: int) -> bool:
        """Whether ``line`` is one of the group's member lines."""
        raw = self._raw
        return raw.body_line <= line < raw.body_line + raw.body.count(b"\n")

    def member(self, line: int, *, keep: bool = False) -> tuple[str, str]:
        """(directive, value as written) of the member at ``line``.

        ``keep``: remember where lines start, for a caller that reads many
        (a large set of wildcard rules read back one by one).
        """
        raw = self._raw
        starts = self._starts
        if starts is None:
            starts = line_starts(raw.body)
            if keep:
                self._starts = starts
        found = member_line(raw.body, starts[line - raw.body_line])
        if found is None:
            raise LookupError(f"no member at line {line}")
        key, value = found
        return KEY_NAMES[key.lower()], value

    def rule_lines(self) -> list[tuple[str, str]]:
        """(directive, value as written) of each ``Allow`` and ``Disallow`` line, in file order."""
        body = self._raw.body
        found = (member_line(body, start) for start in line_starts(body))
        members = ((KEY_NAMES[key.lower()], value) for key, value in filter(None, found))
        return [member for member in members if member[0] in ("allow", "disallow")]

    def pattern(self, line: int, robots_url: str | None) -> Pattern:
        """The wildcard pattern of the rule at ``line``, read again (an index keeps no patterns)."""
        matcher = _rule_pattern(self.member(line, keep=True)[1], robots_url)
        if not isinstance(matcher, Pattern):
            raise LookupError(f"no wildcard rule at line {line}")
        return matcher

    def __repr__(self) -> str:
        return f"<Group {self}>"

    def __str__(self) -> str:
        agents = ", ".join(f"User-agent: {value}" for value, _ in self._raw.agents)
        return f"{agents} (line {self.line})"
