"""A hostile robots.txt costs bounded work per check and bounded memory.

The work is counted in the engine's own units (:class:`.CheckWork`), not
timed: how many rules a check tries one by one against the path, ranks, or
reads again from the file, and how many reports the automaton hands back.
Many wildcard rules are found through an automaton over their literals, so
a check tries the rules whose literal is in the path, not every rule; the
decisions stay those of the reference oracle.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_robotrules import CheckWork, MemoryStore, Precedence, RobotRules, RobotsTxt
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.robots.hostile import literals, windows
from scrapy_robotrules.engine.stores import DEFAULT_CACHE_BYTES, Entry
from tests.helpers.differential import (
    PATTERN_ALPHABET,
    ROBOTS_URLS,
    SCALE,
    check_document,
    rule_lines,
    rule_values,
    urls,
    urls_near,
)
from tests.helpers.reference import PRECEDENCES

pytestmark = pytest.mark.performance

RULES = 24_380


def hostile_file(count: int = RULES, seed: int = 1) -> bytes:
    """The hostile file: ``count`` rules ``Disallow: /*<8 random letters or digits>``."""
    rnd = random.Random(seed)
    alphabet = string.ascii_letters + string.digits
    lines = ["User-agent: *"]
    lines += ["Disallow: /*" + "".join(rnd.choices(alphabet, k=8)) for _ in range(count)]
    return ("\n".join(lines) + "\n").encode()


def counting(robots: RobotsTxt, mode: Precedence) -> CheckWork:
    """The work of ``robots``'s next checks, once its group is read (its first check)."""
    robots.allowed("/", "bot", mode)
    work = robots.count_work()
    work.clear()
    return work


@pytest.mark.parametrize("mode", PRECEDENCES)
@pytest.mark.parametrize("length", [1000, 2083, 100_000])
def test_many_wildcard_rules_are_not_tried_one_by_one(mode: Precedence, length: int) -> None:
    # A rule the automaton found is decided from where it saw the needle, or
    # tried: its pattern matched in full.
    robots = RobotsTxt.parse(hostile_file(), "https://example.com/robots.txt")
    work = counting(robots, mode)
    rnd = random.Random(length)
    path = "/" + "".join(rnd.choices(string.ascii_letters + string.digits, k=length - 1))
    assert robots.allowed(path, "bot", mode)
    # One rule in a thousand would still be work proportional to rules x path.
    assert work.rules_tried <= 10, work


@pytest.mark.parametrize("mode", PRECEDENCES)
def test_a_literal_in_the_path_tries_its_rules_only(mode: Precedence) -> None:
    body = hostile_file(20_000) + b"Disallow: /shop/*keep\nAllow: /*keep-this*x$\n"
    robots = RobotsTxt.parse(body, "https://example.com/robots.txt")
    work = counting(robots, mode)
    decision = robots.explain("/shop/a-keep-this-x", "bot", mode)
    assert decision.rule is not None
    expected = "allow" if mode != "first-match" else "disallow"
    assert decision.rule.directive == expected, decision
    assert work.rules_tried <= 4, work


def needle_path(body: bytes, length: int) -> str:
    """A path of ``length`` characters made of the file's needles: it finds every rule it holds."""
    needles = [line.rsplit(b"*", 1)[1].decode() for line in body.splitlines() if b"*" in line]
    text = "".join(needles)
    return "/" + (text * (length // len(text) + 1))[: length - 1]


@pytest.mark.parametrize("mode", PRECEDENCES)
def test_a_path_of_the_files_own_needles_reads_no_rule_again(mode: Precedence) -> None:
    """12,500 rules found: ranked and decided from the index's arrays, none read again."""
    body = hostile_file()
    robots = RobotsTxt.parse(body, "https://example.com/robots.txt")
    work = counting(robots, mode)
    path = needle_path(body, 100_000)
    assert not robots.allowed(path, "bot", mode)
    assert (work.rules_read_again, work.rules_tried) == (0, 0), work
    decision = robots.explain(path, "bot", mode)
    assert decision.rule is not None
    assert decision.rule.line == 2, decision  # the first rule: they are all as long


@pytest.mark.parametrize("mode", PRECEDENCES)
def test_rules_whose_prefix_the_path_lacks_are_not_read_again(mode: Precedence) -> None:
    """Every needle is in the path, but no rule's text before its ``*``: none is tried."""
    lines = [f"Disallow: /shop/{i}/*{word}*x" for i, word in enumerate(("abc", "bcd") * 500)]
    lines += [f"Disallow: /shop/{i}/*{i:05}" for i in range(1000)]
    body = ("User-agent: *\n" + "\n".join(lines) + "\n").encode()
    robots = RobotsTxt.parse(body, "https://example.com/robots.txt")
    work = counting(robots, mode)
    path = "/" + "".join(f"{i:05}abcdx" for i in range(1000))
    assert robots.allowed(path, "bot", mode)
    assert (work.rules_read_again, work.rules_tried) == (0, 0), work


def test_nested_literals_against_a_run_decide_as_written() -> None:
    """``/*ab``, ``/*aab``... and ``/*a`` * 60 against a run of ``a``, with and without ``b``."""
    lines = ["User-agent: *", *(f"Disallow: /*{'a' * k}b" for k in range(1, 80))]
    lines.append("Allow: /*" + "a" * 60)
    robots = RobotsTxt.parse("\n".join(lines) + "\n")
    assert robots.allowed("/" + "a" * 20_000, "bot")
    assert not robots.allowed("/" + "a" * 20_000 + "b", "bot")


@pytest.mark.parametrize("mode", PRECEDENCES)
def test_a_run_of_one_character_is_read_once(mode: Precedence) -> None:
    """``/*a``, ``/*aa``... against 100,000 ``a``: each needle reports at every ``a``
    (6 million reports, or every rule tried); the run's pieces are all one text, read once."""
    lines = ["User-agent: *", *(f"Disallow: /*{'a' * k}" for k in range(1, 65))]
    lines += [f"Disallow: /*{'a' * k}b" for k in range(1, 65)]
    lines.append("Allow: /*" + "a" * 70)
    robots = RobotsTxt.parse("\n".join(lines) + "\n")
    work = counting(robots, mode)
    decision = robots.explain("/" + "a" * 100_000, "bot", mode)
    assert decision.rule is not None
    expected = ("/*" + "a" * 70, 130) if mode != "first-match" else ("/*a", 2)
    assert (decision.rule.pattern, decision.rule.line) == expected
    # Fewer reports than the path has characters; no rule tried one by one but
    # the one whose needle (70 characters) the automaton holds cut, when it wins.
    cut = int(mode != "first-match")
    assert (work.rules_tried, work.reports < 100_000) == (cut, True), work


ALNUM = string.ascii_letters + string.digits


def nested_lines(count: int, seed: int = 1) -> list[str]:
    """The adversarial benchmark's nested literals: ``/*`` + 1 to 60 ``a`` + two random
    characters. Words that happen to be ``aa`` make needles of ``a`` alone, nested in
    every run of ``a`` (the benchmark's 500 KiB file has six): two are written here."""
    rnd = random.Random(seed)
    lines = [
        f"Disallow: /*{'a' * (1 + i % 60)}{''.join(rnd.choices(ALNUM, k=2))}" for i in range(count)
    ]
    return [*lines, f"Disallow: /*{'a' * 45}aa", f"Disallow: /*{'a' * 55}aa"]


def broken_runs(length: int, every: int = 442, seed: int = 2) -> str:
    """A path of runs of ``a`` broken by two random characters every ``every``: no piece
    of it repeats, so none is read once for many."""
    rnd = random.Random(seed)
    runs = [
        "a" * (every - 2) + "".join(rnd.choices(ALNUM, k=2)) for _ in range(length // every + 1)
    ]
    return ("/" + "".join(runs))[:length]


def expected_line(lines: list[str], path: str, mode: Precedence) -> int | None:
    """The deciding rule's line for rules ``<directive>: /*<literal>`` (lines from 2), by SPEC 5."""
    matching = [
        (line, directive == "Allow", len(value))
        for line, (directive, value) in enumerate((text.split(": ", 1) for text in lines), 2)
        if value[2:] in path[1:]
    ]
    if not matching:
        return None
    if mode == "first-match":
        return matching[0][0]
    if mode == "allow-first":
        return next((line for line, allow, _ in matching if allow), matching[0][0])
    longest = max(length for _, _, length in matching)
    top = [(line, allow) for line, allow, length in matching if length == longest]
    return next((line for line, allow in top if allow), top[0][0])


def check_counted(
    robots: RobotsTxt, lines: list[str], path: str, mode: Precedence
) -> tuple[int, int, int]:
    """(reports, rules ranked but not in the path, rules tried one by one) of one check
    of ``robots`` (made of ``lines``); its decision checked. A scan of every rule, in
    rank order, would rank them all."""
    work = counting(robots, mode)
    decision = robots.explain(path, "bot", mode)
    assert (decision.rule and decision.rule.line) == expected_line(lines, path, mode)
    there = sum(text.split("*", 1)[1] in path[1:] for text in lines)
    return work.reports, work.rules_ranked - there, work.rules_tried


def parsed(lines: list[str]) -> RobotsTxt:
    return RobotsTxt.parse("\n".join(["User-agent: *", *lines, ""]))


@pytest.mark.parametrize("mode", PRECEDENCES)
def test_runs_broken_every_few_characters_report_little(mode: Precedence) -> None:
    """Case (a): no piece of the path repeats, and each ``a`` held the needles
    of ``a`` alone (two reports a character, 200,000 on the 500 KiB file)."""
    path, lines = broken_runs(100_000), nested_lines(3000)
    reports, ranked, tried = check_counted(parsed(lines), lines, path, mode)
    assert (reports < len(path) // 20, ranked, tried) == (True, 0, 0), (reports, ranked, tried)


@pytest.mark.parametrize("mode", PRECEDENCES)
def test_deep_chains_of_one_character_report_little(mode: Precedence) -> None:
    """Case (b): ``/*a`` ... ``/*a`` * 64 besides, so that 64 needles end at
    each ``a``: too many reports, and every rule was then tried one by one."""
    lines = nested_lines(3000) + [f"Disallow: /*{'a' * k}" for k in range(1, 65)]
    path = broken_runs(100_000, every=64)
    reports, ranked, tried = check_counted(parsed(lines), lines, path, mode)
    assert (reports < len(path) // 20, ranked, tried) == (True, 0, 0), (reports, ranked, tried)


@pytest.mark.parametrize("mode", PRECEDENCES)
def test_a_flood_of_reports_tries_no_rule_one_by_one(mode: Precedence) -> None:
    """Nested needles of two characters (``ab``, ``aba``... 63 of them) against runs of
    ``ab`` report up to 32 times a character: read all the same (work bounded by the
    path's length times the needles' lengths), never every rule tried against the path
    (3,000 above them in every mode, none in the path)."""
    chain = [f"Disallow: /*{('ab' * 32)[:k]}" for k in range(2, 65)]
    absent = [f"Allow: /*{'z' * 60}{i:05}" for i in range(3000)]
    robots = RobotsTxt.parse("\n".join(["User-agent: *", *absent, *chain, ""]))
    for seed in (2, 3):
        path = broken_runs(20_000, every=64, seed=seed).replace("a" * 62, "ab" * 31)
        reports, ranked, tried = check_counted(robots, absent + chain, path, mode)
        assert (ranked, tried) == (0, 0), (ranked, tried)
        if seed == 2:
            # The first flood stops soon past its budget (16 reports a character
            # in all): the needles are looked through for periodic ones.
            assert reports < 5 * len(path), reports
        else:
            # Those (``abab``, ``ababa``...) are found from the runs since; ``ab``
            # and ``aba``, shorter than two periods, still report: about one a
            # character.
            assert reports < 2 * len(path), reports


def window_lines(seed: int = 3) -> tuple[list[str], str]:
    """Rules ``/*<w>`` for every window ``w`` of 6 to 20 characters of a random text
    (nested in one another, with no period), and the text twice."""
    text = "".join(random.Random(seed).choices(ALNUM, k=40)) * 2
    return [f"Disallow: /*{text[i : i + k]}" for k in range(6, 21) for i in range(40)], text


def window_path(text: str, length: int, seed: int) -> str:
    """Windows of 20 characters of ``text`` broken by two random ones: no piece repeats."""
    rnd = random.Random(seed)
    pieces = ["/"]
    while sum(map(len, pieces)) < length:
        start = rnd.randrange(40)
        pieces.append(text[start : start + 20] + "".join(rnd.choices(ALNUM, k=2)))
    return "".join(pieces)[:length]


@pytest.mark.parametrize("mode", PRECEDENCES)
def test_a_flood_without_a_period_is_not_read_to_its_end(mode: Precedence) -> None:
    """Nested needles with no period report up to 15 times a character: past the flood's
    budget, the rules are walked in rank order from what was read (300 absent ones
    first, each tried: searched for in the unread end) instead of reading on; the
    nested ones are decided from what was read, none tried."""
    nested, text = window_lines()
    absent = [f"Allow: /*{'z' * 30}{i:04}" for i in range(300)]
    lines = absent + nested
    path = window_path(text, 20_000, seed=1)
    reports, _, tried = check_counted(parsed(lines), lines, path, mode)
    assert (reports < 3 * len(path), tried <= len(absent)) == (True, True), (reports, tried)


@settings(max_examples=50 * SCALE, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="abc/", min_size=1, max_size=9), min_size=1, max_size=30),
    forms=st.lists(st.sampled_from(["/*{}", "/*{}$", "/x*{}", "/*{}*b", "*{}", "/c*{}*a$"])),
    seed=st.integers(0, 2**32),
    flood=st.sampled_from([-(10**9), -2000, 0]),
)
def test_a_flood_walked_in_rank_order_decides_as_the_reference(
    texts: list[str], forms: list[str], seed: int, flood: int
) -> None:
    """Short needles of three letters against a path of them: the path floods at once
    (or after a few pieces), and the rules are walked in rank order, decided from what
    was read or searched for in the rest, or the rest is read when that costs less."""
    rnd = random.Random(seed)
    forms = forms or ["/*{}"]
    lines = [
        f"{rnd.choice(['Allow', 'Disallow'])}: " + forms[i % len(forms)].format(text)
        for i, text in enumerate(texts)
    ]
    lines += [f"Disallow: /*x{i}y" for i in range(70)]  # above AUTOMATON_MIN
    content = "\n".join(["User-agent: *", *lines, ""]).encode()
    path = "".join(rnd.choices("abcx/", weights=[5, 5, 3, 1, 1], k=rnd.randint(400, 2500)))
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(literals, "FLOOD_REPORTS", flood)
        patched.setattr(windows, "WINDOWS", -1)  # the automaton, even for a short path
        check_document(RobotsTxt, content, None, ["FooBot"], ["/x" + path, "/c" + path + "a"])


@settings(max_examples=50 * SCALE, deadline=None)
@given(
    rules=st.lists(
        st.tuples(
            st.sampled_from(["Allow", "Disallow"]),
            st.sampled_from(["/*{}", "/*{}$", "*{}", "/p/*{}", "/p*{}$", "/*{}*b", "/*b{}"]),
            st.sampled_from(["a", "/", "%2F"]),
            st.integers(1, 70),
        ),
        min_size=1,
        max_size=12,
    ),
    runs=st.lists(st.tuples(st.sampled_from(["a", "/", "b", "p", "%2F"]), st.integers(1, 80))),
)
def test_needles_of_one_character_decide_as_the_reference(
    rules: list[tuple[str, str, str, int]], runs: list[tuple[str, int]]
) -> None:
    """Needles of one repeated character are found from the path's runs: after a
    prefix, ending the path, in a longer pattern, cut at 64 characters."""
    lines = [f"{directive}: {form.format(char * count)}" for directive, form, char, count in rules]
    lines += [f"Disallow: /*x{i}y" for i in range(70)]  # above AUTOMATON_MIN
    content = "\n".join(["User-agent: *", *lines, ""]).encode()
    text = "".join(char * count for char, count in runs)
    path = ("/b" if text.startswith("/") else "/") + text  # "//..." names a host
    check_document(RobotsTxt, content, None, ["FooBot"], [path, "/p" + path, path + "b"])


@settings(max_examples=50 * SCALE, deadline=None)
@given(
    rules=st.lists(
        st.tuples(
            st.sampled_from(["Allow", "Disallow"]),
            st.sampled_from(["/*{}", "/*{}$", "/x*{}", "/*{}*b", "/*b{}"]),
            st.sampled_from(["ab", "ba", "aab", "a%2F", "/a"]),
            st.integers(2, 70),
        ),
        min_size=1,
        max_size=12,
    ),
    runs=st.lists(
        st.tuples(st.sampled_from(["ab", "ba", "aab", "a%2F", "/a", "x", "b"]), st.integers(1, 40))
    ),
    cut=st.integers(0, 3),
)
def test_periodic_needles_decide_as_the_reference(
    rules: list[tuple[str, str, str, int]], runs: list[tuple[str, int]], cut: int
) -> None:
    """``abab``, ``ababa``... are found from the path's runs once a flood showed them
    (here any report is one): in phase or not, after a prefix, ending the path, cut."""
    lines = [
        f"{directive}: {form.format((root * 40)[:count])}" for directive, form, root, count in rules
    ]
    lines += [f"Disallow: /*x{i}y" for i in range(70)]  # above AUTOMATON_MIN
    content = "\n".join(["User-agent: *", *lines, ""]).encode()
    text = "".join(unit * count for unit, count in runs)
    path = "/x" + text[: len(text) - cut]
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(literals, "FLOOD_REPORTS", -(10**9))
        patched.setattr(windows, "WINDOWS", -1)  # the automaton, even for a short path
        check_document(RobotsTxt, content, None, ["FooBot"], [path, path + "b", "/b" + path])


@settings(max_examples=50 * SCALE, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 30), min_size=8, max_size=20, unique=True),
    forms=st.lists(
        st.sampled_from(["Allow: /*{}", "Disallow: /*{}", "Disallow: /*{}$", "Allow: /*{}*b"]),
        min_size=8,
        max_size=8,
    ),
    ends=st.sampled_from(["", "b", "%2F", "é"]),
    size=st.integers(200, 3000),
)
def test_a_flood_of_reports_decides_as_the_reference(
    lengths: list[int], forms: list[str], ends: str, size: int
) -> None:
    """Literals nested as suffixes of one another, against a run of ``a``: every rule is
    tried from the index's arrays in rank order, and decides as the reference says."""
    lines = [forms[i % len(forms)].format("a" * k) for i, k in enumerate(lengths)]
    lines += [f"Disallow: /*x{i}y" for i in range(70)]  # above AUTOMATON_MIN
    content = "\n".join(["User-agent: *", *lines, ""]).encode()
    path = "/" + "a" * size + ends
    check_document(RobotsTxt, content, None, ["FooBot"], [path, path[:40], "/b" + path])


# Enough wildcard rules for the automaton, made of the differential tests' pieces.
filler_rules = st.lists(
    st.builds(
        lambda directive, form, text: f"{directive}: {form.format(text)}",
        st.sampled_from(["Allow", "Disallow"]),
        st.sampled_from(["/*{}", "*{}$", "/a*{}", "/*{}*b", "/{}*", "/*{}$", "*{}*%2F"]),
        st.text(alphabet=PATTERN_ALPHABET, min_size=1, max_size=4).map(
            lambda t: t.replace("#", "").replace("$", "") or "b"
        ),
    ),
    min_size=70,  # above index.literals.AUTOMATON_MIN
    max_size=90,
)


@settings(max_examples=100 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=st.lists(rule_lines, max_size=6),
    fillers=filler_rules,
    robots_url=st.sampled_from(ROBOTS_URLS),
    targets=st.lists(urls(), max_size=3),
    data=st.data(),
)
def test_many_wildcard_rules_agree_with_reference(
    *,
    rules: list[str],
    fillers: list[str],
    robots_url: str | None,
    targets: list[str],
    data: st.DataObject,
) -> None:
    lines = data.draw(st.permutations([*rules, *fillers]))
    text = "\n".join(["User-agent: *", *lines, ""])
    content = text.encode("utf-8", "surrogateescape")
    values = rule_values(content)
    targets = targets + data.draw(st.lists(urls_near(values), min_size=1, max_size=6))
    check_document(RobotsTxt, content, robots_url, ["FooBot"], targets)


# The rules cache is bounded in bytes as well as in origins.


def hostile_entry(origin: str, clock: float = 0.0) -> Entry:
    robots = RobotsTxt.parse(hostile_file(), f"{origin}/robots.txt")
    return Entry(origin, Outcome.RULES, robots, fetched_at=clock, fresh_until=clock + 3600)


def test_an_entry_weighs_its_file() -> None:
    small = RobotsTxt.parse(b"User-agent: *\nDisallow: /private\n")
    assert small.weight < 4096
    heavy = hostile_entry("https://heavy.example")
    assert heavy.robots is not None
    assert heavy.weight > 15 * heavy.robots.size > 7_500_000


def test_the_memory_store_evicts_by_weight() -> None:
    evicted: list[str] = []
    store = MemoryStore(capacity=None, on_evict=lambda e: evicted.append(e.origin))
    assert store.max_bytes == DEFAULT_CACHE_BYTES
    store = MemoryStore(None, lambda e: evicted.append(e.origin), max_bytes=25_000_000)
    for i in range(3):
        store.put(hostile_entry(f"https://heavy{i}.example"))
    assert evicted == ["https://heavy0.example"]
    assert len(store) == 2
    assert store.weight <= 25_000_000
    store.get("https://heavy1.example")  # used: heavy2 is now the oldest
    store.put(hostile_entry("https://heavy3.example"))
    assert evicted == ["https://heavy0.example", "https://heavy2.example"]
    store.delete("https://heavy1.example")
    store.delete("https://heavy3.example")
    assert store.weight == 0


def test_one_entry_heavier_than_the_budget_is_still_kept() -> None:
    store = MemoryStore(max_bytes=1000)
    store.put(hostile_entry("https://heavy.example"))
    assert store.get("https://heavy.example") is not None


def test_the_database_counts_evictions_by_weight(tmp_path: Path) -> None:
    body = hostile_file()
    for store in (None, f"sqlite:///{tmp_path}/robots.db"):
        rules = RobotRules("bot", store=store, cache_bytes=25_000_000)
        for i in range(4):
            rules.parse(f"https://heavy{i}.example/robots.txt", body)
        assert (len(rules), rules.evicted) == (2, 2), store
        assert rules.allowed("https://heavy3.example/x") is True


def test_explaining_again_reads_no_rule_text_again() -> None:
    """An index keeps line numbers; a crawler explains every request, so a rule read is kept."""
    robots = RobotsTxt.parse(hostile_file(2_000) + b"Disallow: /private\n")
    work = robots.count_work()
    for _ in range(100):
        decision = robots.explain("/private/page", "bot")
        assert decision.rule is not None
        assert (decision.rule.pattern, decision.rule.line) == ("/private", 2_002)
    assert work.rules_read_again == 1
