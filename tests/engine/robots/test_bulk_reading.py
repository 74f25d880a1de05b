"""Rule values cut by the line regex and normalised in bulk (the first check's cost).

Values cut in bulk (escapes, non-ASCII, several stars) must mean what
:class:`.Pattern` and :func:`.compile_matcher` say of each alone, and
decide as the reference. What reading them in bulk saves over reading them
value by value is ``benchmarks/fast_paths.py``'s to count (its "several
stars" and "escaped rules" inputs).
"""

from __future__ import annotations

from itertools import compress

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots.patterns import Pattern, compile_matcher
from scrapy_robotrules.engine.robots.reading import member_columns
from scrapy_robotrules.engine.robots.star_columns import StarRules, cut_starred
from scrapy_robotrules.engine.robots.wildcards import shape_of
from tests.helpers.differential import ROBOTS_URLS, SCALE, check_document, rule_values, urls_near


def many_star_file(count: int) -> bytes:
    """The benchmark's wildcard file: rules of three stars and a ``$``, one group."""
    lines = ["User-agent: *"]
    lines += [f"Disallow: /*x{i}*y{i % 97}*.php$" for i in range(count)]
    return ("\n".join(lines) + "\n").encode()


def test_rules_of_several_stars_read_in_bulk_decide_as_written() -> None:
    # Escapes, non-ASCII, a value starting with "*": cut by the line regex too.
    robots = RobotsTxt.parse(
        many_star_file(2_000) + b"Disallow: /*%7e*b*%41$\nAllow: /\xc3\xa9*x*y\nAllow: *q*r\n"
    )
    assert robots.allowed("/index.html", "bot")
    shown = robots.explain("/q/r", "bot").rule
    assert shown is not None
    assert (shown.directive, shown.pattern) == ("allow", "*q*r")
    assert not robots.allowed("/a/x12/y12/item.php", "bot")
    assert robots.allowed("/a/x12/y12/item.php?", "bot")
    assert not robots.allowed("/~/b/A", "bot")
    assert robots.explain("/%C3%A9/x/y", "bot").rule is not None


def test_a_large_group_with_a_few_other_lines_decides_as_written() -> None:
    # Plain rules read in columns, among them a few star rules and a
    # Crawl-delay, gathered at their lines.
    plain = "".join(f"Disallow: /p{i}/\nAllow: /p{i}/ok\n" for i in range(50))
    mixed = plain + "Disallow: /*.php$\nCrawl-delay: 5\nDisallow: /a/*/b*c\n"
    for body in (plain, mixed):
        robots = RobotsTxt.parse("User-agent: *\n" + body)
        assert not robots.allowed("/p7/x", "bot")
        assert robots.allowed("/p7/ok", "bot")
    assert not robots.allowed("/x.php", "bot")
    assert robots.allowed("/x.php?", "bot")
    assert not robots.allowed("/a/x/by/c", "bot")
    assert robots.crawl_delay("bot") == 5


def test_escaped_plain_values_are_plain_rules() -> None:
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /a%7eb\nAllow: /a%7eb/\xc3\xa9\n")
    assert not robots.allowed("/a~b/x", "bot")
    assert robots.allowed("/a~b/%C3%A9z", "bot")
    rules = robots.groups[0].rules(None)
    assert rules.disallow[0] == [b"/a~b"]
    assert rules.allow[0] == [b"/a~b/%C3%A9"]
    assert not rules.stars.lines
    assert not rules.many.lines


# Values the line regex cuts: "/" or "*" then characters it lets through,
# stars, a final "$".
CUT_ALPHABET = [*"/ab%2F7e*?;=.", "é", "ツ", "\udcff"]
cut_values = st.builds(
    lambda first, body, anchor: first + body + anchor,
    st.sampled_from(["/", "*"]),
    st.text(alphabet=CUT_ALPHABET, max_size=12),
    st.sampled_from(["", "$"]),
)


@settings(max_examples=300 * SCALE, deadline=None)
@given(values=st.lists(cut_values, min_size=1, max_size=12))
@example(values=["/a" + "*b" * 20 + "$", "/" + "*%7e" * 18, "/*a" * 17, "/*" * 20 + "é$"])
def test_values_cut_in_bulk_mean_what_each_alone_means(values: list[str]) -> None:
    body = "".join(f"\nDisallow: {value}" for value in values).encode("utf-8", "surrogateescape")
    columns = member_columns(body)
    stride = 11
    taken = list(map(bool, columns[3::stride]))
    # Every value but a plain one needing no work (the regex's first branch) is cut.
    assert taken == [not value.isascii() or any(c in value for c in "%*$") for value in values]
    cut = StarRules(
        [line for line, was in enumerate(taken) if was],
        [False] * sum(taken),
        *(list(compress(columns[k::stride], taken)) for k in (4, 5, 6, 7)),  # type: ignore[arg-type]
    )
    one, many, plain = cut_starred(cut)
    for line, value in compress(enumerate(values), taken):
        matcher = compile_matcher(value)
        assert matcher is not None
        if isinstance(matcher, str):
            assert (line, False, matcher.encode()) in plain
            continue
        shape, piece = shape_of(matcher)
        if line in one.lines:
            i = one.lines.index(line)
            head, star, tail, anchor = (c[i].decode() for c in one[2:])
            assert head == matcher.prefix
            assert Pattern(head + star + tail + anchor).priority == matcher.priority
            assert (tail if star else "") == (matcher.needle if star else "")
        else:
            i = many.lines.index(line)
            assert many.prefixes[i] == matcher.prefix
            assert many.needles[i] == matcher.needle
            assert many.priorities[i] == matcher.priority
            assert many.shapes[i] == shape
            if shape != 2:  # GENERAL: its piece unused
                assert many.needles[i] == piece
            # The pattern a GENERAL row is given, made from prefix and rest.
            made = Pattern(many.prefixes[i] + "*" + many.tails[i] + "$" * many.anchored[i])
            fields = ("prefix", "middle", "last", "anchored", "priority", "needle")
            assert [getattr(made, f) for f in fields] == [getattr(matcher, f) for f in fields]


# Many rules of several stars (to the automaton), with escapes and non-ASCII.
many_star_rules = st.lists(
    st.builds(
        lambda directive, form, a, b: f"{directive}: {form.format(a, b)}",
        st.sampled_from(["Allow", "Disallow", "disallow"]),
        st.sampled_from(
            ["/*{}*{}", "/{}*{}*$", "/a*{}**{}$", "/*{}*{}*", "/%7e*{}*{}", "/é{}*{}", "*{}*{}$"]
        ),
        st.text(alphabet=[*"ab%2F7e$", "é"], max_size=4),
        st.text(alphabet=[*"ab%2F7e*", "ツ"], max_size=4),
    ),
    min_size=1,
    max_size=90,
)


@settings(max_examples=60 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=many_star_rules, robots_url=st.sampled_from(ROBOTS_URLS), data=st.data())
def test_rules_of_several_stars_agree_with_reference(
    *, rules: list[str], robots_url: str | None, data: st.DataObject
) -> None:
    content = "\n".join(["User-agent: *", *rules, ""]).encode("utf-8", "surrogateescape")
    targets = data.draw(st.lists(urls_near(rule_values(content)), min_size=1, max_size=6))
    check_document(RobotsTxt, content, robots_url, ["FooBot"], targets)
