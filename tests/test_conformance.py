"""Every shared conformance vector, through the engine (SPEC.md, all sections 1-5)."""

from __future__ import annotations

import pytest
from vectors import Vector, load_vectors, vectors_path

from scrapy_robotrules import RobotsTxt

# A missing shared/ must fail the run, not skip it: these vectors are the contract.
VECTORS: list[Vector] = load_vectors()


def test_vectors_are_there() -> None:
    assert vectors_path().is_file()
    assert len(VECTORS) > 200


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_vector(vector: Vector) -> None:
    robots = RobotsTxt.parse(vector.robots_txt, vector.robots_url)
    url = vector.url or "/"
    allowed = robots.allowed(url, vector.agent, vector.precedence, vector.agent_match)
    decision = robots.explain(url, vector.agent, vector.precedence, vector.agent_match)
    assert allowed == vector.expected, f"{vector.source}: {decision}"
    # explain() and allowed() never disagree, and the rule named really decides.
    assert decision.allowed == allowed
    if decision.rule is not None:
        assert decision.rule.allow == allowed
