"""``robotrules audit FILE`` and ``robotrules compare --builtin``, run in-process, offline."""

from __future__ import annotations

import builtins
import io
import sys
from pathlib import Path
from typing import Any

import pytest

from scrapy_robotrules.engine.digests import sha256_of
from scrapy_robotrules.engine.operator_tools.audit_trail import fetch_line, request_line
from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt
from tests.helpers.cli import run

BODY = b"User-agent: *\nDisallow: /private\nDisallow: /tmp\n"
T0 = 1_800_000_000.0


def written_trail(tmp_path: Path) -> str:
    site, dead = "https://site.test", "https://dead.test"
    rules = RobotsTxt.parse(BODY, f"{site}/robots.txt")
    dropped = Decision.without_rules(
        f"{dead}/x", "bot", "most-specific", "token", allowed=False, note="unreachable"
    )
    lines = [
        fetch_line(site, at=T0, status=200, body=BODY, outcome="rules", elapsed=0.5),
        *(
            request_line(
                rules.explain(f"{site}{path}", "bot"),
                origin=site,
                at=T0 + 1,
                mode="shadow",
                robots_sha256=sha256_of(BODY),
            )
            for path in ("/private/a", "/private/b", "/tmp/c", "/open")
        ),
        fetch_line(dead, at=T0 + 10, outcome="unreachable", elapsed=10.0, error="timeout"),
        request_line(
            dropped, origin=dead, at=T0 + 70, verdict="unreachable", outcome="unreachable"
        ),
        fetch_line(dead, at=T0 + 130, status=200, body=BODY, outcome="rules", elapsed=0.25),
        "{broken",
    ]
    path = tmp_path / "audit.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_audit_summarises_a_trail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "audit", written_trail(tmp_path))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "9 lines: 5 requests, 3 robots.txt fetches, 2 origins, 1 bad (line 9)",
        "requests by mode: enforce 1, shadow 4",
        "forbidden, per origin (1 origin):",
        "  https://site.test: 3 of 4 requests, 3 let through by shadow mode",
        "         2  Disallow: /private (line 2)",
        "         1  Disallow: /tmp (line 3)",
        "unreachable robots.txt (1 time):",
        "  https://dead.test: 120.0 s from 2027-01-15T08:00:10Z until 2027-01-15T08:02:10Z"
        " (1 fetch, 1 requests dropped)",
        "slowest robots.txt (3 of 3):",
        "    10.000 s  https://dead.test  no response unreachable",
        "     0.500 s  https://site.test  200 rules",
        "     0.250 s  https://dead.test  200 rules",
    ]


def test_audit_top_limits_each_part(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "audit", "--top", "1", written_trail(tmp_path))
    assert code == 0
    assert "Disallow: /tmp" not in out
    assert "slowest robots.txt (1 of 3):" in out
    assert "0.500 s" not in out


def test_audit_reads_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = Path(written_trail(tmp_path)).read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = run(capsys, "audit", "-")
    assert code == 0
    assert out.startswith("9 lines: 5 requests")


def test_audit_of_a_missing_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "audit", str(tmp_path / "none.jsonl"))
    assert (code, out) == (2, "")
    assert err.startswith("robotrules: error: cannot read")
    assert "Traceback" not in err
    code, _, err = run(capsys, "audit", "--top", "0", str(tmp_path / "none.jsonl"))
    assert code == 2
    assert "--top must be a positive number" in err


def test_audit_of_a_file_of_garbage_counts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "noise.bin"
    path.write_bytes(bytes(range(11, 256)) * 100 + b"\n[1]\n\xff\xfe{}\n")
    code, out, _ = run(capsys, "audit", str(path))
    assert code == 0
    assert out.splitlines()[0] == "3 lines: 0 requests, 0 robots.txt fetches, 0 origins, 3 bad" + (
        " (line 1, 2, 3)"
    )


ROBOTS = (
    b"User-agent: *\n"
    b"Disallow: /folder1/\n"
    b"Allow: /folder1/myfile.html\n"
    b"Disallow: /caf\xe9/\n"
    b"Allow: /\n"
    b"Disallow: /cgi-bin\n"
)


def robots_file(tmp_path: Path) -> str:
    path = tmp_path / "robots.txt"
    path.write_bytes(ROBOTS)
    return str(path)


def test_compare_builtin_shows_protego_beside_each_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        "compare",
        "--builtin",
        robots_file(tmp_path),
        "https://a.test/folder1/myfile.html",
        "https://a.test/caf%E9/menu",
        "https://a.test/cgi-bin/x",
        "https://a.test/open",
    )
    assert (code, err) == (1, "")
    assert [" ".join(line.split()) for line in out.splitlines()] == [
        "URL protego (Scrapy) most-specific first-match allow-first",
        "! https://a.test/folder1/myfile.html allowed"
        " allowed (line 3) disallowed (line 2) allowed (line 3)",
        # Protego reads the file as Scrapy gives it: the byte that is not UTF-8 dropped,
        # so its rule becomes /caf/ and no longer matches.
        "! https://a.test/caf%E9/menu allowed"
        " disallowed (line 4) disallowed (line 4) allowed (line 5)",
        "! https://a.test/cgi-bin/x disallowed"
        " disallowed (line 6) allowed (line 5) allowed (line 5)",
        "https://a.test/open allowed allowed (line 5) allowed (line 5) allowed (line 5)",
        "protego disagrees with most-specific (the default) on 1 of 4 URLs;"
        " the deciders disagree on 3",
    ]


def test_compare_builtin_agrees_exits_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "compare", "--builtin", robots_file(tmp_path), "/open", "/other")
    assert code == 0
    assert out.splitlines()[-1].endswith("on 0 of 2 URLs; the deciders disagree on 0")


def test_compare_without_builtin_is_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "compare", robots_file(tmp_path), "/open")
    assert code == 0
    assert "protego" not in out
    assert out.split()[:4] == ["URL", "most-specific", "first-match", "allow-first"]


def test_compare_builtin_without_protego_says_how_to_get_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_protego(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "protego":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_protego)
    code, out, err = run(capsys, "compare", "--builtin", robots_file(tmp_path), "/open")
    assert (code, out) == (2, "")
    assert "pip install protego" in err
