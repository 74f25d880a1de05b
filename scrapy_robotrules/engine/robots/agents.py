"""Which groups of a file apply to a crawler: product tokens and the two matching styles.

SPEC 3. ``token`` (RFC 9309 §2.2.1): every group naming the crawler's product
token applies, merged; else every ``*`` group. ``substring`` (the 1994 text as
WWW::RobotRules reads it): the first group whose name is a substring of the
crawler's token applies alone (an empty name is a substring of every token);
else every ``*`` group.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Final, Literal, TypeAlias

__all__ = [
    "AGENT_MATCH_STYLES",
    "WILDCARD",
    "AgentMatch",
    "check_agent_match",
    "product_token",
    "select",
]

AgentMatch: TypeAlias = Literal["token", "substring"]
"""The agent matching styles, as a type: a type checker rejects ``"tokens"``."""

TOKEN: Final = "token"
SUBSTRING: Final = "substring"
AGENT_MATCH_STYLES: tuple[AgentMatch, ...] = (TOKEN, SUBSTRING)
WILDCARD = "*"

# ASCII whitespace only, as for the lines themselves: an NBSP is part of a name.
_BLANKS = " \t\n\r\v\f"
_TOKEN_END = re.compile(r"[/ \t\n\r\v\f]")


def check_agent_match(style: str) -> AgentMatch:
    """``style`` itself, or ``ValueError`` naming the valid choices.

    The runtime check behind the :data:`AgentMatch` type, for untyped callers
    and values read from settings or the command line.
    """
    for known in AGENT_MATCH_STYLES:
        if style == known:
            return known
    choices = ", ".join(repr(s) for s in AGENT_MATCH_STYLES)
    raise ValueError(f"agent_match must be one of {choices}, not {style!r}")


@lru_cache(maxsize=256)
def product_token(agent: str) -> str:
    """The crawler's name: ``MyBot/1.2 (+https://x)`` -> ``mybot``."""
    agent = agent.strip(_BLANKS)
    end = _TOKEN_END.search(agent)
    if end is not None:
        agent = agent[: end.start()]
    return agent.lower()


@lru_cache(maxsize=4096)
def group_token(value: str) -> str:
    """A ``User-agent`` value reduced like a product token, trailing ``*`` dropped.

    ``googlebot/1.2`` and ``googlebot*`` both mean ``googlebot``; ``*`` alone is
    the wildcard.
    """
    token = product_token(value)
    if token == WILDCARD:
        return token
    stripped = token.rstrip("*")
    return stripped if stripped else WILDCARD if token else ""


def select(group_tokens: Sequence[tuple[str, ...]], agent: str, style: str) -> tuple[int, ...]:
    """Indexes of the groups that apply to ``agent``, in file order.

    ``group_tokens`` holds each group's reduced ``User-agent`` tokens. An
    empty one is a substring of every token, so in ``substring`` style it
    applies to every crawler (as in WWW::RobotRules and urllib.robotparser);
    in ``token`` style it names none.
    """
    token = product_token(agent)
    if style == TOKEN:
        if token:
            chosen = tuple(i for i, names in enumerate(group_tokens) if token in names)
            if chosen:
                return chosen
    else:
        for i, names in enumerate(group_tokens):
            if any(name != WILDCARD and name in token for name in names):
                return (i,)
    return tuple(i for i, names in enumerate(group_tokens) if WILDCARD in names)
