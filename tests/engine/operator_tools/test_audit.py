"""The audit trail's lines (never a credential) and their summary (bad lines counted, not fatal)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from scrapy_robotrules.engine.digests import sha256_of
from scrapy_robotrules.engine.operator_tools.audit_trail import (
    MAX_LINE,
    MAX_TEXT,
    fetch_line,
    read_lines,
    request_line,
    summarise,
    text_without_credentials,
    url_without_credentials,
)
from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt

BODY = b"User-agent: *\nAllow: /public\nDisallow: /private\nDisallow: /tmp\n"
SECRET = "s3cret-pw"
T0 = 1_800_000_000.0


def robots() -> RobotsTxt:
    return RobotsTxt.parse(BODY, "https://site.test/robots.txt")


def test_a_forbidden_request_names_its_rule_line_and_file() -> None:
    decision = robots().explain("https://site.test/private/x?q=1#frag", "ExampleBot/1.0 (+x)")
    line = request_line(
        decision,
        origin="https://site.test",
        at=T0 + 0.12345,
        robots_sha256=sha256_of(BODY),
        fetched_at=T0,
    )
    assert "\n" not in line
    assert json.loads(line) == {
        "event": "request",
        "time": T0 + 0.123,
        "url": "https://site.test/private/x?q=1",
        "origin": "https://site.test",
        "decision": "forbidden",
        "mode": "enforce",
        "shadow": False,
        "agent": "examplebot",
        "precedence": "most-specific",
        "rule": "Disallow: /private",
        "line": 3,
        "reason": None,
        "outcome": "rules",
        "robots_sha256": sha256_of(BODY),
        "robots_fetched": T0,
        "policy": None,
    }


def test_shadow_mode_marks_what_it_let_through() -> None:
    decision = robots().explain("https://site.test/tmp/a", "bot", "first-match")
    forbidden = json.loads(request_line(decision, origin="https://site.test", at=T0, mode="shadow"))
    assert (forbidden["decision"], forbidden["shadow"], forbidden["precedence"]) == (
        "forbidden",
        True,
        "first-match",
    )
    allowed = robots().explain("https://site.test/public", "bot")
    line = json.loads(request_line(allowed, origin="https://site.test", at=T0, mode="shadow"))
    assert (line["decision"], line["shadow"], line["rule"]) == ("allowed", False, "Allow: /public")


def test_a_request_decided_without_rules_says_why() -> None:
    unreachable = Decision.without_rules(
        "https://dead.test/x",
        "bot",
        "most-specific",
        "token",
        allowed=False,
        note="robots.txt unreachable for 300 s",
    )
    line = json.loads(
        request_line(
            unreachable,
            origin="https://dead.test",
            at=T0,
            verdict="unreachable",
            outcome="unreachable",
            policy="*.test",
        )
    )
    assert line["decision"] == "unreachable"
    assert (line["rule"], line["line"]) == (None, None)
    assert line["reason"] == "robots.txt unreachable for 300 s"
    assert line["policy"] == "*.test"
    no_group = robots().explain("https://site.test/robots.txt", "bot")
    assert json.loads(request_line(no_group, origin="https://site.test", at=T0))["reason"] == (
        "/robots.txt itself is always allowed"
    )


def test_unknown_words_are_refused() -> None:
    decision = robots().explain("https://site.test/", "bot")
    for wrong in ({"mode": "dry"}, {"verdict": "maybe"}, {"outcome": "fine"}):
        with pytest.raises(ValueError, match="not an audit decision"):
            request_line(decision, origin="https://site.test", at=T0, **wrong)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not an audit outcome"):
        fetch_line("https://site.test", at=T0, outcome="fine", elapsed=0.1)


@pytest.mark.parametrize(
    "url",
    [
        f"https://me:{SECRET}@site.test/private/x",
        f"https://me:{SECRET}@site.test",
        f"https://me:{SECRET}@site.test?x",
        f"https://me:pa@{SECRET}@site.test/private/x",
        f"https://me:{SECRET}@site.test:8443/private/x",
        f"HTTPS://me:{SECRET}@site.test\\private",
        f"https://{SECRET}@site.test/private/x#me:{SECRET}@x",
    ],
)
def test_no_line_ever_holds_a_user_name_or_password(url: str) -> None:
    decision = robots().explain(url, "bot")
    lines = [
        request_line(decision, origin=url, at=T0, robots_sha256=sha256_of(BODY)),
        fetch_line(
            url,
            url=url + "/robots.txt",
            at=T0,
            status=None,
            outcome="unreachable",
            elapsed=1.0,
            error=f"Connection to https://me:pa@{SECRET}@site.test/robots.txt refused;"
            f" redirected from ftp://me:{SECRET}@other.test/",
        ),
    ]
    for line in lines:
        assert SECRET not in line
        assert "me:" not in line
        assert "site.test" in line


def test_urls_keep_everything_but_the_credentials_and_fragment() -> None:
    assert url_without_credentials("http://u:p@a.test:81/p;x?q=@1#f") == "http://a.test:81/p;x?q=@1"
    assert (
        url_without_credentials("http://a.test/p?mail=a@b.test") == "http://a.test/p?mail=a@b.test"
    )
    assert url_without_credentials("/private") == "/private"
    assert text_without_credentials("see http://u:p@a.test and https://x@b.test/") == (
        "see http://a.test and https://b.test/"
    )
    assert text_without_credentials("mail me@a.test") == "mail me@a.test"


def test_a_fetch_line_names_the_body_by_its_hash() -> None:
    line = json.loads(
        fetch_line(
            "https://site.test",
            at=T0,
            status=200,
            body=BODY,
            freshness=86_400,
            outcome="rules",
            elapsed=0.25,
        )
    )
    assert line == {
        "event": "fetch",
        "time": T0,
        "origin": "https://site.test",
        "url": None,
        "status": 200,
        "bytes": len(BODY),
        "sha256": sha256_of(BODY),
        "freshness": 86_400,
        "outcome": "rules",
        "elapsed": 0.25,
        "error": None,
        "policy": None,
        "licenses": None,
    }
    assert (
        json.loads(fetch_line("x", at=T0, outcome="unreachable", elapsed=float("nan")))["elapsed"]
        is None
    )


def trail(path: Path) -> Path:
    """A crawl's trail: three origins, one unreachable for a while, one never again, bad lines."""
    site, dead, gone = "https://site.test", "https://dead.test", "http://gone.test"
    rules = robots()

    def request(url: str, at: float, **extra: object) -> str:
        decision = rules.explain(url, "bot")
        return request_line(decision, origin=site, at=at, robots_sha256=sha256_of(BODY), **extra)  # type: ignore[arg-type]

    def unreachable(origin: str, at: float) -> str:
        decision = Decision.without_rules(
            origin + "/x", "bot", "most-specific", "token", allowed=False, note="unreachable"
        )
        return request_line(
            decision, origin=origin, at=at, verdict="unreachable", outcome="unreachable"
        )

    lines = [
        fetch_line(site, at=T0, status=200, body=BODY, outcome="rules", elapsed=0.5),
        request(f"{site}/private/a", T0 + 1),
        request(f"{site}/private/b", T0 + 2),
        request(f"{site}/tmp/c", T0 + 3, mode="shadow"),
        request(f"{site}/public", T0 + 4),
        "not json at all",
        json.dumps({"event": "request", "origin": site, "time": "yesterday"}),
        '{"event": "fetch", "origin": "x", "time": NaN, "outcome": "rules"}',
        "[" * 100_000,
        "",
        fetch_line(dead, at=T0 + 10, outcome="unreachable", elapsed=10.0, error="timeout"),
        fetch_line(dead, at=T0 + 40, outcome="unreachable", elapsed=10.0, error="timeout"),
        unreachable(dead, T0 + 50),
        fetch_line(dead, at=T0 + 100, status=404, outcome="allow-all", elapsed=0.1),
        fetch_line(gone, at=T0 + 20, status=503, body=b"", outcome="unreachable", elapsed=2.0),
        unreachable(gone, T0 + 200),
        unreachable(gone, T0 + 300),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_summarise_a_written_trail(tmp_path: Path) -> None:
    with trail(tmp_path / "audit.jsonl").open("rb") as handle:
        summary = summarise(read_lines(handle), slowest=2)
    assert summary.lines == 17
    assert (summary.bad_lines, summary.first_bad) == (4, [6, 7, 8, 9])
    assert (summary.requests, summary.fetches) == (7, 5)
    assert dict(summary.modes) == {"enforce": 6, "shadow": 1}
    site = summary.origins["https://site.test"]
    assert site.requests["forbidden"] == 3
    assert site.shadow == 1
    assert dict(site.forbidden_by) == {
        "Disallow: /private (line 3)": 2,
        "Disallow: /tmp (line 4)": 1,
    }
    assert [
        (span.origin, span.seconds, span.fetches, span.recovered) for span in summary.unreachable
    ] == [("http://gone.test", 280.0, 1, False), ("https://dead.test", 90.0, 2, True)]
    assert summary.origins["http://gone.test"].requests["unreachable"] == 2
    assert [(f.origin, f.elapsed) for f in summary.slowest] == [
        ("https://dead.test", 10.0),
        ("https://dead.test", 10.0),
    ]
    assert summary.slowest[0].time == T0 + 10  # of equals, the earlier line first


def test_a_line_too_long_is_one_bad_line() -> None:
    good = fetch_line("https://a.test", at=T0, outcome="allow-all", elapsed=0.1).encode()
    data = good + b"\n" + b'{"x": "' + b"a" * (3 * MAX_LINE) + b'"}\n' + good + b"\n"
    lines = list(read_lines(io.BytesIO(data)))
    assert len(lines) == 3
    assert max(map(len, lines)) == MAX_LINE
    summary = summarise(lines)
    assert (summary.fetches, summary.bad_lines, summary.first_bad) == (2, 1, [2])


def test_an_empty_trail_is_summarised() -> None:
    summary = summarise([])
    assert (summary.lines, summary.requests, summary.unreachable, summary.slowest) == (0, 0, [], [])


def test_a_rule_as_long_as_its_file_is_cut_in_each_request_line() -> None:
    # A single Disallow line can be as long as the parsed file: each request
    # it decides must not write all of it again.
    pattern = "/p/" + "x" * 400_000
    robots = RobotsTxt.parse(f"User-agent: *\nDisallow: {pattern}\n".encode(), "https://s.test/")
    decision = robots.explain(f"https://s.test{pattern}", "bot")
    assert not decision.allowed
    line = json.loads(request_line(decision, origin="https://s.test", at=T0))
    assert len(line["rule"]) == MAX_TEXT
    assert line["rule"].startswith("Disallow: /p/xxx")
    assert line["rule"].endswith("...")
    assert line["line"] == 2
