"""A hostile robots.txt holds bounded memory per origin.

Bytes are counted, never timed: the automata held by the process's cache,
against its budget. Rules read in bulk (escapes, non-ASCII) decide as the
reference says; what reading them in bulk saves is
``benchmarks/fast_paths.py``'s to count.
"""

from __future__ import annotations

import gc
import random
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots import patterns
from scrapy_robotrules.engine.robots.hostile import automata as automata_module
from scrapy_robotrules.engine.robots.hostile import literals
from scrapy_robotrules.engine.robots.hostile.automata import (
    AUTOMATON_BYTES_PER_CHAR,
    AutomatonCache,
    set_automaton_bytes,
)
from scrapy_robotrules.engine.robots.hostile.literals import NEEDLE
from scrapy_robotrules.engine.robots.hostile.windows import WINDOWS
from tests.helpers.differential import ROBOTS_URLS, SCALE, check_document, rule_values, urls_near

pytestmark = pytest.mark.performance

RULES = 2_000
ALNUM = string.ascii_letters + string.digits


def hostile_file(seed: int, count: int = RULES, form: str = "/*{}") -> bytes:
    rnd = random.Random(seed)
    lines = ["User-agent: *"]
    lines += ["Disallow: " + form.format("".join(rnd.choices(ALNUM, k=8))) for _ in range(count)]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch) -> AutomatonCache:
    """A cache of its own for the test, with room for two automata of :func:`hostile_file`."""
    # Weighed by its needles joined (8 characters and a line break each), and
    # 512 bytes a rule for those read again.
    own = AutomatonCache(max_bytes=2 * ((RULES * 9 - 1) * AUTOMATON_BYTES_PER_CHAR + RULES * 512))
    monkeypatch.setattr(literals, "automata", own)
    return own


def long(path: str) -> str:
    """``path`` made long enough to need the automaton: a shorter one has its needles
    looked up (see :mod:`.windows`)."""
    return path + "-" * (WINDOWS + NEEDLE)


def needle_in(body: bytes) -> str:
    """A path that holds the first rule's literal, long enough to need the automaton."""
    return long("/x" + body.split(b"\n")[1].split(b"*")[1].decode() + "y")


def test_the_process_holds_automata_within_its_budget(cache: AutomatonCache) -> None:
    files = [hostile_file(seed) for seed in range(6)]
    parsed = [RobotsTxt.parse(body) for body in files]
    for robots in parsed:
        assert robots.allowed(long("/nothing-here"), "bot")
        assert cache.weight <= cache.max_bytes
    assert (cache.built, len(cache), cache.evicted) == (6, 2, 4)
    # An evicted file answers as before: its automaton is built again.
    assert not parsed[0].allowed(needle_in(files[0]), "bot")
    assert (cache.built, len(cache)) == (7, 2)
    # Used again while held: nothing is built.
    assert not parsed[0].allowed(needle_in(files[0]), "bot")
    assert cache.built == 7
    # A file its caller drops gives its automaton's weight back (once
    # collected: a file and its index refer to each other).
    del parsed, robots
    gc.collect()
    assert (len(cache), cache.weight) == (0, 0)


def test_the_least_recently_used_automaton_goes_first(cache: AutomatonCache) -> None:
    first, second, third = (RobotsTxt.parse(hostile_file(seed)) for seed in range(3))
    first.allowed(long("/a"), "bot")
    second.allowed(long("/a"), "bot")
    first.allowed(long("/b"), "bot")  # first is now the last used: second goes
    third.allowed(long("/a"), "bot")
    built = cache.built
    first.allowed(long("/c"), "bot")
    third.allowed(long("/c"), "bot")
    assert cache.built == built
    second.allowed(long("/c"), "bot")
    assert cache.built == built + 1


def test_a_budget_of_nothing_builds_for_each_check(cache: AutomatonCache) -> None:
    cache.resize(0)
    robots = RobotsTxt.parse(hostile_file(1))
    assert robots.allowed(long("/a"), "bot")
    assert robots.allowed(long("/b"), "bot")
    assert (cache.built, len(cache), cache.weight) == (2, 0, 0)


def test_the_process_budget_is_a_setting() -> None:
    before = automata_module.automata.max_bytes
    try:
        set_automaton_bytes(1000)
        assert automata_module.automata.max_bytes == 1000
        with pytest.raises(ValueError, match="at least 0"):
            set_automaton_bytes(-1)
    finally:
        set_automaton_bytes(before)


def test_escaped_rules_read_in_bulk_decide_as_written() -> None:
    """Many ``Disallow: /*%7e<letters>%2f``, non-ASCII ones, a value starting with its star."""
    body = hostile_file(3, form="/*%7e{}%2f") + hostile_file(4, 100, form="/é{}$")[14:]
    robots = RobotsTxt.parse(body + b"Disallow: /a*b*c\nAllow: *%41\n")
    assert robots.allowed("/", "bot")
    shown = robots.explain("/xA", "bot").rule
    assert shown is not None
    assert (shown.directive, shown.pattern) == ("allow", "*%41")
    # The bulk-read rules decide as their patterns say.
    literal = body.split(b"\n")[1].split(b"%7e")[1].split(b"%2f")[0].decode()
    assert not robots.allowed(f"/x~{literal}%2Fy", "bot")
    assert robots.allowed(f"/x~{literal}/y", "bot")
    exact = body.split(b"\n")[-2].decode().split(": ")[1]
    decision = robots.explain(exact[:-1], "bot")
    assert decision.rule is not None
    assert decision.rule.pattern == exact
    assert robots.allowed(exact[:-1] + "z", "bot")


def test_simple_values_are_cut_and_normalised() -> None:
    assert patterns.simple_values(["/*%7ea$", "/a*b*c", "/a$b", "*x"]) == (
        ["/", "", "", ""],
        ["*", "", "", ""],
        ["~a", "", "", ""],
        ["$", "", "", ""],
    )


# Enough rules with escapes or non-ASCII for the bulk reading, among others.
escaped_rules = st.lists(
    st.builds(
        lambda directive, form, text: f"{directive}: {form.format(text)}",
        st.sampled_from(["Allow", "Disallow", "allow", "DISALLOW", "Dissallow"]),
        st.sampled_from(["/*{}", "/{}*", "/a{}$", "/*{}$", "/{}", "/%7e*{}", "/é*{}$ ", "/{}*$"]),
        st.text(alphabet=[*"ab%2F7eé$*", "ツ", " ", "\x1c"], min_size=1, max_size=5),
    ),
    min_size=70,  # above groups._BULK
    max_size=90,
)


@settings(max_examples=60 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=escaped_rules, robots_url=st.sampled_from(ROBOTS_URLS), data=st.data())
def test_rules_read_in_bulk_agree_with_reference(
    *, rules: list[str], robots_url: str | None, data: st.DataObject
) -> None:
    content = "\n".join(["User-agent: *", *rules, ""]).encode("utf-8", "surrogateescape")
    targets = data.draw(st.lists(urls_near(rule_values(content)), min_size=1, max_size=6))
    check_document(RobotsTxt, content, robots_url, ["FooBot"], targets)
