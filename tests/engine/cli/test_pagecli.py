"""``robotrules page FILE``: the page-level rules of a saved response, offline."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from scrapy_robotrules.engine.cli.page_commands import read_saved_response
from tests.helpers.cli import run

SAVED = (
    b"HTTP/1.1 301 Moved Permanently\r\nLocation: /page\r\n\r\n"
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: text/html; charset=utf-8\r\n"
    b"X-Robots-Tag: examplebot: noindex\r\n"
    b"X-Robots-Tag: otherbot: nofollow,\r\n unavailable_after: 2001-01-01\r\n"
    b"\r\n"
    b'<html><head><meta name="robots" content="max-snippet:20, foo">'
    b'<meta name="ExampleBot" content="nofollow"></head><body>x</body></html>'
)


def saved(tmp_path: Path, content: bytes, name: str = "page.http") -> str:
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


def test_rules_for_this_agent_and_where_each_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "page", saved(tmp_path, SAVED), "--agent", "ExampleBot/1.0 (+x)")
    assert code == 1
    assert out.splitlines() == [
        "agent: examplebot; read: 2 X-Robots-Tag header(s), 2 meta tag(s) in the head",
        "  noindex <- noindex (for examplebot; X-Robots-Tag header 1: 'examplebot: noindex')",
        "  nofollow <- nofollow (for ExampleBot; <meta name=\"ExampleBot\"> 2: 'nofollow')",
        "  max-snippet: 20 <- max-snippet: 20 (for every crawler;"
        " <meta name=\"robots\"> 1: 'max-snippet:20, foo')",
        "  not for this crawler: nofollow (for otherbot; X-Robots-Tag header 2:"
        " 'otherbot: nofollow, unavailable_after: 2001-01-01')",
        "  not for this crawler: unavailable_after: 2001-01-01 (for otherbot;"
        " X-Robots-Tag header 2: 'otherbot: nofollow, unavailable_after: 2001-01-01')",
        '  unknown, no effect: foo (for every crawler; <meta name="robots"> 1:'
        " 'max-snippet:20, foo')",
        "verdict: noindex, nofollow",
    ]


def test_another_agent_sees_only_the_generic_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "page", saved(tmp_path, SAVED), "--agent", "SomeBot")
    assert code == 0
    assert out.splitlines()[-1] == "verdict: index and follow"
    assert "not for this crawler: noindex (for examplebot" in out


def test_otherbot_gets_the_passed_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "page", saved(tmp_path, SAVED), "--agent", "OtherBot")
    assert code == 1
    assert "unavailable_after: 2001-01-01T00:00:00+00:00 (passed) <- " in out
    assert out.splitlines()[-1] == "verdict: nofollow, unavailable_after has passed"


def test_a_bare_html_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = b'<!doctype html><head><META name=ROBOTS content="NONE"></head>'
    code, out, _ = run(capsys, "page", saved(tmp_path, html, "page.html"))
    assert code == 1
    assert out.splitlines()[0] == "agent: *; read: a bare file, 1 meta tag(s) in the head"
    assert out.splitlines()[-1] == "verdict: noindex, nofollow"


def test_a_pdf_body_is_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdf = (
        b"HTTP/1.1 200 OK\nContent-Type: application/pdf\nX-Robots-Tag: noarchive\n\n"
        b'%PDF-1.4 <meta name="robots" content="noindex">'
    )
    code, out, _ = run(capsys, "page", saved(tmp_path, pdf))
    assert code == 0
    assert "body not read (application/pdf)" in out.splitlines()[0]
    assert "  noarchive <- noarchive (for every crawler; X-Robots-Tag header 1: 'noarchive')" in (
        out.splitlines()
    )


def test_no_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "page", saved(tmp_path, b"<p>hello</p>"))
    assert code == 0
    assert "no restricting rule for *: index and follow" in out


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    class Stdin:
        buffer = io.BytesIO(b"HTTP/1.1 200 OK\r\nX-Robots-Tag: none\r\n\r\n")

    monkeypatch.setattr(sys, "stdin", Stdin)
    code, out, _ = run(capsys, "page", "-")
    assert code == 1
    assert "verdict: noindex, nofollow" in out


def test_urls_are_not_fetched(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "page", "https://example.com/")
    assert code == 2
    assert out == ""
    assert "fetches nothing; save one first: curl -si URL > page.http" in err


def test_missing_file_and_bad_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "page", str(tmp_path / "none.http"))
    assert code == 2
    assert "cannot read" in err
    assert "Traceback" not in err
    code, _, err = run(capsys, "page", saved(tmp_path, b""), "--max-html", "0")
    assert code == 2
    assert "--max-html must be a positive number of bytes" in err


def test_saved_response_parsing() -> None:
    headers, body = read_saved_response(SAVED)
    assert headers is not None
    assert [name for name, _ in headers] == ["content-type", "x-robots-tag", "x-robots-tag"]
    assert headers[2][1] == "otherbot: nofollow, unavailable_after: 2001-01-01"
    assert body.startswith(b"<html>")
    assert read_saved_response(b"HTTP/1.1 200 OK\r\nX-Robots-Tag: noindex") == (
        [("x-robots-tag", "noindex")],
        b"",
    )
    assert read_saved_response(b"<html>") == (None, b"<html>")


def test_huge_and_malformed_saved_responses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    header_lines = b"".join(
        b"X-Robots-Tag: nosnippet, " + b"x" * 10_000 + b"\r\n" for _ in range(50)
    )
    data = (
        b"HTTP/1.1 200 OK\r\n" + header_lines + b"X-Robots-Tag: \xff\x00:::\r\n\r\n" + b"<" * 10**6
    )
    code, out, err = run(capsys, "page", saved(tmp_path, data))
    assert code == 0
    assert "X-Robots-Tag header 51: " in out  # every line read, the last one too
    assert "not read:" not in out
    assert err == ""
