"""Coverage-guided fuzzing of the parser and matcher with atheris.

Run for a minute (from the repository root)::

    python tests/fuzz/fuzz_parser.py -max_total_time=60

Each input is split into a robots.txt, a URL and an agent. Beyond "never
raises", it checks what must always hold: ``allowed`` and ``explain`` agree,
the deciding rule has the verdict's directive, decisions are
deterministic, and long paths normalise as short ones do.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from scrapy_robotrules import AgentMatch, Precedence, RobotsTxt
    from scrapy_robotrules.engine.robots.urls import (
        _LONG,
        _OCTET_WORK,
        _normalize_long,
        _octets,
        _to_octets,
    )

MODES: tuple[Precedence, ...] = ("most-specific", "first-match", "allow-first")
STYLES: tuple[AgentMatch, ...] = ("token", "substring")


def one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    agent = provider.ConsumeUnicodeNoSurrogates(provider.ConsumeIntInRange(0, 24))
    url = provider.ConsumeUnicode(provider.ConsumeIntInRange(0, 200))
    robots_url = "http://e.com/robots.txt" if provider.ConsumeBool() else None
    content = provider.ConsumeBytes(provider.remaining_bytes())
    robots = RobotsTxt.parse(content, robots_url)
    for style in STYLES:
        for mode in MODES:
            allowed = robots.allowed(url, agent, mode, style)
            decision = robots.explain(url, agent, mode, style)
            if decision.allowed != allowed:
                raise AssertionError(f"explain disagrees with allowed: {decision}")
            if decision.rule is not None and decision.rule.allow != allowed:
                raise AssertionError(f"rule and verdict disagree: {decision}")
            if robots.allowed(url, agent, mode, style) != allowed:
                raise AssertionError("not deterministic")
        robots.crawl_delay(agent, style)
        robots.request_rate(agent, style)
        robots.visit_time(agent, style)
    _ = robots.sitemaps, robots.host, robots.unknown_lines
    # The URL, repeated to the length where normalisation takes the long way:
    # that way must give what the run-by-run way gives.
    octets = _to_octets(url * (_LONG // max(1, len(url)) + 1))
    if _normalize_long(octets) != _OCTET_WORK.sub(_octets, octets).decode("ascii"):
        raise AssertionError(f"long normalisation differs for {url!r}")


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
