"""Every conformance vector, through the engine (SPEC.md, all sections 1-5)."""

from __future__ import annotations

import pytest

from scrapy_robotrules import RobotsTxt
from tests.helpers.vectors import (
    Vector,
    load_vectors,
    shared_dir,
    shared_vectors_path,
    vectors_path,
)

# The repository's copy (tests/data/vectors.txt): a missing file fails the
# run at collection, it never skips: these vectors are the contract.
VECTORS: list[Vector] = load_vectors()


def test_vectors_are_there() -> None:
    assert vectors_path().is_file()
    assert len(VECTORS) >= 219


def test_vectors_equal_the_shared_ones() -> None:
    if not shared_dir().is_dir():
        pytest.skip(f"no shared directory beside the repository ({shared_dir().name}/)")
    # shared/ is there, so its vectors must be too, and equal ours byte for byte.
    assert vectors_path().read_bytes() == shared_vectors_path().read_bytes(), (
        "tests/data/vectors.txt differs from shared/conformance/vectors.txt: copy it again"
    )


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
