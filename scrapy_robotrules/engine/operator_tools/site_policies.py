"""Per-site policy (``ROBOTRULES_POLICIES``): read, checked, and found by host.

An operator who lacks a finer control switches robots.txt off for the whole
crawl; a policy changes it for the hosts it names only: ``ignore`` (crawl
without robots.txt), a robots.txt of the operator's own used instead of the
site's (Heritrix's "custom"), another agent name, precedence mode or agent
matching style, a Crawl-delay override, a 401/403 policy, and what a
Crawl-delay above the maximum does (``clamp`` it, or ``skip`` the site:
:mod:`.site_delays`).

Host patterns: an exact host (``shop.example.com``), ``*.example.com`` (every
subdomain of example.com at any depth, not example.com itself) and ``*``
(every host no other pattern names). Which applies: an exact host beats any
wildcard; among wildcards the longest suffix (most labels) wins; ``*`` last.
Every error is a :class:`PolicyError` (a ``ValueError``) naming the pattern
and the field. Fetching and deciding stay in the crawl layer (SPEC 8).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache, partial

from scrapy_robotrules.engine import untrusted
from scrapy_robotrules.engine.digests import sha256_of
from scrapy_robotrules.engine.robots.agents import AGENT_MATCH_STYLES, AgentMatch, product_token
from scrapy_robotrules.engine.robots.fetch_outcomes import UNAUTHORIZED_CHOICES
from scrapy_robotrules.engine.robots.precedence import PRECEDENCE_MODES, Precedence
from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE
from scrapy_robotrules.engine.robots.robotstxt import RobotsTxt
from scrapy_robotrules.engine.robots.urls import origin_of

__all__ = [
    "DELAY_ACTIONS",
    "FIELDS",
    "SETTING",
    "Policies",
    "Policy",
    "PolicyError",
    "parse_policies",
    "plain",
]

SETTING = "ROBOTRULES_POLICIES"
OBEY = "obey"
IGNORE = "ignore"
ROBOTS_CHOICES = (OBEY, IGNORE)
CLAMP = "clamp"
SKIP = "skip"
DELAY_ACTIONS = (CLAMP, SKIP)
"""What a Crawl-delay above the maximum does: ``clamp`` it to the maximum, or ``skip`` the site."""
FIELDS = (
    "robots",
    "robots_txt",
    "user_agent",
    "precedence",
    "agent_match",
    "unauthorized",
    "crawl_delay",
    "max_crawl_delay",
    "max_crawl_delay_action",
)
"""The keys a policy may have: each is the project setting ``ROBOTRULES_<KEY>``, for its hosts."""
MAX_POLICIES = 1_000_000
MAX_DELAY = 86_400.0
MAX_AGENT = 1_000
MAX_DEPTH = 16  # JSON nesting read at most: a policy needs two (host pattern, field)
MAX_DIGITS = 30  # digits of a JSON whole number read at most: no field takes more
_SHOWN = 60
_shown = partial(untrusted.shown, limit=_SHOWN)
"""``repr(value)``, cut short: a hostile value must not make a megabyte error line."""
_WITH_IGNORE = frozenset({"robots", "crawl_delay"})
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_IPV6 = re.compile(r"\[[0-9a-f:.]{2,45}\]")


class PolicyError(ValueError):
    """``ROBOTRULES_POLICIES`` cannot be used; ``pattern`` and ``field`` say where."""

    def __init__(self, message: str, *, pattern: str | None = None, field: str | None = None):
        super().__init__(message)
        self.pattern = pattern
        self.field = field


def _where(pattern: object, field: str | None = None) -> str:
    place = f"{SETTING}[{_shown(pattern)}]"
    return place if field is None else f"{place}[{field!r}]"


def _invalid(pattern: object, field: str | None, expected: str, value: object) -> PolicyError:
    shown = pattern if isinstance(pattern, str) else _shown(pattern)
    return PolicyError(
        f"{_where(pattern, field)} must be {expected}, not {_shown(value)}",
        pattern=shown,
        field=field,
    )


def _error(pattern: str, field: str, text: str) -> PolicyError:
    return PolicyError(f"{_where(pattern, field)} {text}", pattern=pattern, field=field)


def _one_of(choices: tuple[str, ...]) -> str:
    listed = [repr(c) for c in choices]
    return "one of " + ", ".join(listed[:-1]) + " or " + listed[-1]


@dataclass(frozen=True)
class Policy:
    """What one host pattern changes; ``None`` leaves the project's setting in force."""

    pattern: str
    """The host pattern as written (the key in ``ROBOTRULES_POLICIES``)."""
    ignore: bool = False
    """Crawl the hosts without robots.txt (none is fetched; every request allowed, counted)."""
    robots_txt: bytes | None = None
    """The operator's own robots.txt, decided by instead of the site's (none is fetched)."""
    user_agent: str | None = None
    precedence: Precedence | None = None
    agent_match: AgentMatch | None = None
    unauthorized: str | None = None
    obey_crawl_delay: bool | None = None
    crawl_delay: float | None = None
    """Seconds between requests, whatever robots.txt asks (not capped)."""
    max_crawl_delay: float | None = None
    max_crawl_delay_action: str | None = None

    @property
    def robots_sha256(self) -> str | None:
        """SHA-256 of the operator's robots.txt, as the audit trail names a file."""
        return None if self.robots_txt is None else sha256_of(self.robots_txt)

    def choose(
        self, agent: str, precedence: Precedence, agent_match: AgentMatch
    ) -> tuple[str, Precedence, AgentMatch]:
        """The agent, precedence and agent_match for its hosts, given the project's."""
        return (
            self.user_agent or agent,
            self.precedence or precedence,
            self.agent_match or agent_match,
        )

    def robots_for(self, origin: str) -> RobotsTxt:
        """The operator's robots.txt as the file of ``origin`` (``ValueError`` without one)."""
        if self.robots_txt is None:
            raise ValueError(f"the policy for {self.pattern} has no robots_txt")
        return _parsed(self.robots_txt, f"{origin}/robots.txt")

    def describe(self) -> str:
        """``policy for *.example.com: ignore``: one line for explain() and the audit."""
        parts = [IGNORE] if self.ignore else []
        if self.robots_txt is not None:
            parts.append(f"robots_txt of the operator's own ({len(self.robots_txt)} bytes)")
        named = ("user_agent", "precedence", "agent_match", "unauthorized")
        parts += [f"{n} {getattr(self, n)}" for n in named if getattr(self, n) is not None]
        if self.crawl_delay is not None:
            parts.append(f"crawl_delay {plain(self.crawl_delay)} s")
        elif self.obey_crawl_delay is not None:
            parts.append(f"crawl_delay {'obeyed' if self.obey_crawl_delay else 'ignored'}")
        if self.max_crawl_delay is not None:
            parts.append(f"max_crawl_delay {plain(self.max_crawl_delay)} s")
        if self.max_crawl_delay_action is not None:
            parts.append(f"max_crawl_delay_action {self.max_crawl_delay_action}")
        return f"policy for {self.pattern}: {', '.join(parts) or 'the project settings'}"

    def __str__(self) -> str:
        return self.describe()


@lru_cache(maxsize=1024)
def _parsed(content: bytes, url: str) -> RobotsTxt:
    return RobotsTxt.parse(content, url)


def plain(number: float) -> str:
    """``2``, ``0.5``: seconds as a person writes them."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


class Policies:
    """Every policy of the setting, found by host in a few dict lookups."""

    __slots__ = ("_default", "_depth", "_exact", "_wildcard")

    def __init__(self, policies: Mapping[str, Policy] | None = None) -> None:
        self._exact: dict[str, Policy] = {}
        self._wildcard: dict[str, Policy] = {}
        self._default: Policy | None = None
        self._depth = 0
        for key, policy in (policies or {}).items():
            kind, host = _host_pattern(key)
            table = self._exact if kind == "exact" else self._wildcard
            if kind == "default":
                if self._default is not None:
                    raise _same(key, self._default.pattern)
                self._default = policy
            elif host in table:
                raise _same(key, table[host].pattern)
            else:
                table[host] = policy
                if kind == "wildcard":
                    self._depth = max(self._depth, host.count(".") + 1)

    def __len__(self) -> int:
        return len(self._exact) + len(self._wildcard) + (self._default is not None)

    def __bool__(self) -> bool:
        return len(self) > 0

    def for_host(self, host: str) -> Policy | None:
        """The policy for ``host`` (as in a URL; case and a final dot do not matter)."""
        host = host.lower().rstrip(".")
        found = self._exact.get(host)
        if found is not None:
            return found
        if self._wildcard:
            # Only suffixes with as many labels as the longest wildcard can match:
            # a hostile host of 100,000 labels costs what a short one does.
            ends: list[int] = []
            end = len(host)
            for _ in range(self._depth):
                end = host.rfind(".", 0, end)
                if end < 0:
                    break
                ends.append(end)
            for end in reversed(ends):  # the longest suffix first
                found = self._wildcard.get(host[end + 1 :])
                if found is not None:
                    return found
        return self._default

    def for_url(self, url: str) -> Policy | None:
        """The policy for the host of ``url`` (or of an origin); ``None`` when it has no host."""
        try:
            origin = origin_of(url)
        except ValueError:
            return None
        host = origin.partition("://")[2]
        if host.startswith("["):
            return self.for_host(host[: host.find("]") + 1])
        return self.for_host(host.partition(":")[0])


def _same(key: str, other: str) -> PolicyError:
    return PolicyError(
        f"{_where(key)} names the same hosts as {_where(other)}", pattern=key, field=None
    )


def _host_pattern(key: object) -> tuple[str, str]:
    """(``exact``, ``wildcard`` or ``default``; the host, normalised) of a pattern."""
    expected = "a host ('shop.example.com'), '*.example.com' or '*'"
    if not isinstance(key, str):
        raise PolicyError(f"{SETTING} keys must be {expected}, not {_shown(key)}", pattern=None)
    text = key.strip().lower()
    if text == "*":
        return "default", ""
    if "/" in text or "://" in text:
        raise PolicyError(f"{_where(key)}: the key is {expected}, not a URL", pattern=key)
    kind = "exact"
    if text.startswith("*."):
        kind, text = "wildcard", text[2:]
    host = text.rstrip(".")
    if kind == "exact" and _IPV6.fullmatch(host):
        return kind, host
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise PolicyError(f"{_where(key)}: {host!r} is no host name", pattern=key) from None
    if "*" in host:
        raise PolicyError(f"{_where(key)}: '*' only as '*.example.com' or alone", pattern=key)
    if ":" in host:
        raise PolicyError(
            f"{_where(key)}: a host without a port (a policy is per host)", pattern=key
        )
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in host.split(".")):
        raise PolicyError(f"{_where(key)}: {_shown(host)} is no host name", pattern=key)
    return kind, host


def _seconds(pattern: str, field: str, value: object) -> float:
    # Compared as given, not as floats: a 400-digit whole number is no float; NaN fails.
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= MAX_DELAY:
        return float(value)
    raise _invalid(pattern, field, f"a number of seconds from 0 to {int(MAX_DELAY)}", value)


def _choice(pattern: str, field: str, value: object, choices: tuple[str, ...]) -> str:
    if isinstance(value, str) and value.strip().lower() in choices:
        return value.strip().lower()
    raise _invalid(pattern, field, _one_of(choices), value)


def _robots_txt(pattern: str, value: object) -> bytes:
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    if not isinstance(value, bytes):
        raise _invalid(pattern, "robots_txt", "the text of a robots.txt (str or bytes)", value)
    if len(value) > DEFAULT_MAX_SIZE:
        raise _error(
            pattern, "robots_txt", f"is {len(value)} bytes; at most {DEFAULT_MAX_SIZE} are read"
        )
    if not RobotsTxt.parse(value).groups:
        raise _error(
            pattern,
            "robots_txt",
            "has no User-agent group: give the text of a robots.txt (not a file name);"
            " to crawl without rules, use 'robots': 'ignore'",
        )
    return value


def _policy(pattern: str, value: object) -> Policy:
    if isinstance(value, str):
        value = {"robots": value}
    if not isinstance(value, Mapping):
        raise _invalid(pattern, None, "a dict of policy fields, 'ignore' or 'obey'", value)
    for name in value:
        if name not in FIELDS:
            close = (
                difflib.get_close_matches(str(name), FIELDS, n=1) if isinstance(name, str) else []
            )
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise PolicyError(
                f"{_where(pattern)} has an unknown field {_shown(name)}{hint};"
                f" known: {', '.join(FIELDS)}",
                pattern=pattern,
                field=str(name),
            )
    given = {name: item for name, item in value.items() if item is not None}
    found: dict[str, object] = {}
    if "robots" in given:
        found["ignore"] = _choice(pattern, "robots", given["robots"], ROBOTS_CHOICES) == IGNORE
    if found.get("ignore"):
        extra = sorted(set(given) - _WITH_IGNORE)
        if extra:
            raise _error(pattern, extra[0], "has no effect with 'robots': 'ignore'")
    if "robots_txt" in given:
        found["robots_txt"] = _robots_txt(pattern, given["robots_txt"])
        if "unauthorized" in given:
            raise _error(pattern, "unauthorized", "has no effect with 'robots_txt' (no fetch)")
    if "user_agent" in given:
        agent = given["user_agent"]
        if not isinstance(agent, str) or not product_token(agent) or len(agent) > MAX_AGENT:
            raise _invalid(pattern, "user_agent", "a crawler name such as 'MyBot/1.0'", agent)
        found["user_agent"] = agent.strip()
    for name, choices in (
        ("precedence", PRECEDENCE_MODES),
        ("agent_match", AGENT_MATCH_STYLES),
        ("unauthorized", UNAUTHORIZED_CHOICES),
        ("max_crawl_delay_action", DELAY_ACTIONS),
    ):
        if name in given:
            found[name] = _choice(pattern, name, given[name], choices)
    if "crawl_delay" in given:
        delay = given["crawl_delay"]
        if isinstance(delay, bool):
            found["obey_crawl_delay"] = delay
        else:
            try:
                found["crawl_delay"] = _seconds(pattern, "crawl_delay", delay)
            except PolicyError:
                raise _invalid(
                    pattern, "crawl_delay", "True, False or a number of seconds", delay
                ) from None
    if "max_crawl_delay" in given:
        found["max_crawl_delay"] = _seconds(pattern, "max_crawl_delay", given["max_crawl_delay"])
    return Policy(pattern, **found)  # type: ignore[arg-type]


def parse_policies(value: object) -> Policies:
    """``ROBOTRULES_POLICIES`` read and checked: a mapping, a JSON object (``-s``), or None."""
    value = untrusted.setting_mapping(
        value,
        setting=SETTING,
        error=PolicyError,
        expected="a dict of host patterns",
        expected_in_full="a dict of host patterns, each of fields",
        entries="host patterns",
        max_entries=MAX_POLICIES,
        max_depth=MAX_DEPTH,
        max_digits=MAX_DIGITS,
        limit=_SHOWN,
    )
    policies: dict[str, Policy] = {}
    for key, item in value.items():
        _host_pattern(key)
        policies[key] = _policy(key, item)
    return Policies(policies)
