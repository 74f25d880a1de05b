"""A short path's needles are looked up in a dict until an automaton would cost less.

Building the automaton over a hostile file's needles was a third of its
first check; looking up every window of every later check cost ten times
what the automaton then does. Work is counted, never timed: the automata
built (the process's cache counts them), the windows looked up (the file
does, :class:`.CheckWork`). Needles found either way decide as the
reference oracle says.
"""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots.hostile import literals, windows
from scrapy_robotrules.engine.robots.hostile.automata import AutomatonCache
from tests.helpers.differential import ROBOTS_URLS, SCALE, check_document, rule_values, urls_near

pytestmark = pytest.mark.performance

ALNUM = string.ascii_letters + string.digits


def hostile_file(count: int = 2_000, sizes: tuple[int, ...] = (8,), seed: int = 1) -> bytes:
    """``count`` rules ``Disallow: /*<random letters or digits>``, of the needle ``sizes``."""
    rnd = random.Random(seed)
    lines = ["User-agent: *"]
    lines += [
        f"Disallow: /*{''.join(rnd.choices(ALNUM, k=sizes[i % len(sizes)]))}" for i in range(count)
    ]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch) -> AutomatonCache:
    """A cache of the test's own, as the process's."""
    own = AutomatonCache()
    monkeypatch.setattr(literals, "automata", own)
    return own


def random_path(length: int, seed: int = 0) -> str:
    return "/" + "".join(random.Random(length + seed).choices(ALNUM, k=length - 1))


@pytest.mark.parametrize("sizes", [(8,), (19,), (6, 9)])
def test_paths_up_to_the_url_length_limit_build_no_automaton(
    cache: AutomatonCache, sizes: tuple[int, ...]
) -> None:
    body = hostile_file(sizes=sizes)
    needle = body.split(b"\n")[1].split(b"*")[1].decode()
    robots = RobotsTxt.parse(body)
    assert robots.allowed("/index.html", "bot")
    assert robots.allowed(random_path(windows.SHORT_PATH), "bot")
    assert not robots.allowed(f"/x{needle}y", "bot")
    assert not robots.allowed(random_path(windows.SHORT_PATH)[:-40] + needle, "bot")
    assert cache.built == 0
    # A longer path builds it once; shorter ones then use it too.
    assert robots.allowed(random_path(windows.WINDOWS + 64), "bot")
    assert not robots.allowed(f"/x{needle}y", "bot")
    assert cache.built == 1


def test_short_checks_look_up_windows_until_the_automaton_would_cost_less(
    cache: AutomatonCache,
) -> None:
    """Rent or buy: one short check builds nothing; many build the automaton once, after
    looking up no more windows than its construction is worth, and then look up none."""
    body = hostile_file()
    needles = [line.split(b"*")[1].decode() for line in body.split(b"\n")[1:-1]]
    robots = RobotsTxt.parse(body)
    work = robots.count_work()
    assert robots.allowed(random_path(windows.SHORT_PATH), "bot")
    assert cache.built == 0
    assert work.windows_looked_up == windows.SHORT_PATH - 8 + 1
    budget = windows.build_cost(len("\n".join(needles)))
    checks = 2 * budget // windows.SHORT_PATH
    for seed in range(1, checks):
        assert robots.allowed(random_path(windows.SHORT_PATH, seed), "bot")
    assert cache.built == 1
    assert budget - windows.SHORT_PATH < work.windows_looked_up <= budget
    looked_up = work.windows_looked_up
    for seed in range(checks, checks + 20):
        assert robots.allowed(random_path(windows.SHORT_PATH, seed), "bot")
        assert not robots.allowed(random_path(windows.SHORT_PATH, seed)[:-9] + needles[seed], "bot")
    assert work.windows_looked_up == looked_up
    assert work.reports > 0  # the automaton's
    assert cache.built == 1


def test_needles_of_many_lengths_build_the_automaton_at_once(cache: AutomatonCache) -> None:
    """Else a 2,083-character path after a short first one would pay for its construction."""
    robots = RobotsTxt.parse(hostile_file(sizes=(6, 7, 8)))
    assert robots.allowed("/index.html", "bot")
    assert cache.built == 1


def test_the_needles_looked_up_are_weighed_and_made_again(cache: AutomatonCache) -> None:
    body = hostile_file()
    needle = body.split(b"\n")[1].split(b"*")[1].decode()
    robots = RobotsTxt.parse(body)
    assert robots.allowed("/index.html", "bot")
    assert len(cache) == 1
    assert cache.weight >= len(body) // 2
    cache.resize(0)  # taken back at once, each time: made again for each check
    assert not robots.allowed(f"/x{needle}y", "bot")
    assert robots.allowed("/index.html", "bot")
    assert (cache.built, len(cache), cache.weight) == (0, 0, 0)


# Wildcard rules of one or two needle lengths (so that they are looked up), with
# repeated needles, needles of one character (left to the path's runs), prefixes, "$".
few_lengths = st.lists(
    st.builds(
        lambda directive, form, text: f"{directive}: {form.format(text)}",
        st.sampled_from(["Allow", "Disallow"]),
        st.sampled_from(["/*{}", "/*{}$", "/a*{}", "/*{}*b", "/p/*{}", "*{}", "/a%2F*{}$"]),
        st.one_of(
            st.text(alphabet="ab/%2Fé", min_size=3, max_size=3),
            st.sampled_from(["aaaa", "bbbb", "%2F%2F", "abab", "éé"]),
        ),
    ),
    min_size=70,  # above index.literals.AUTOMATON_MIN
    max_size=90,
)


@settings(max_examples=100 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    way=st.sampled_from(["looked up", "automaton", "looked up, then automaton"]),
    lines=few_lengths,
    robots_url=st.sampled_from(ROBOTS_URLS),
    data=st.data(),
)
def test_needles_found_either_way_decide_as_the_reference(
    way: str, lines: list[str], robots_url: str | None, data: st.DataObject
) -> None:
    content = "\n".join(["User-agent: *", *lines, ""]).encode()
    values = rule_values(content)
    near = st.lists(urls_near(values), min_size=1, max_size=4)
    # And a longer path holding several of them.
    targets = [*data.draw(near), "http://example.com/" + "".join(data.draw(near)) * 3]
    with pytest.MonkeyPatch.context() as patched:
        # The third way switches from the first to the second midway (at the default
        # budget: an automaton over a few hundred characters costs a few checks).
        if way == "automaton":
            patched.setattr(windows, "WINDOWS", -1)
        else:
            patched.setattr(windows, "WINDOWS", 10**9)
        if way == "looked up":
            patched.setattr(windows, "BUILD_WINDOWS_PER_CHAR", 10**9)
        check_document(RobotsTxt, content, robots_url, ["FooBot"], targets)
