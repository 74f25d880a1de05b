"""``robotrules lint``: the lines the reader ignored or read leniently, and why (SPEC 1, 2, 6).

Every finding is checked against what the reader did with the same line,
so lint and reader cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_robotrules import RobotsTxt
from scrapy_robotrules.engine.robots.lint import Finding, doubts, lint
from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE, read_bytes
from scrapy_robotrules.engine.robots.signal_lines import MAX_LICENSES, license_lines
from tests.helpers.cli import run
from tests.helpers.corpus_subset import load

FILE = (
    b"Disallow: /early\n"  # 1: before any User-agent line
    b"# a comment\n"
    b"User-agent: *\n"
    b"Disalow: /typo\n"  # 4: accepted typo
    b"Disallow /nocolon\n"  # 5: two words, no colon: read
    b"Disallow /two /words\n"  # 6: no colon, three words: ignored
    b"Foo: bar\n"  # 7: unknown field
    b"Crawl-delay: soon\n"  # 8: value not understood
    b"Allow: /caf\xe9\n"  # 9: not UTF-8
    b"Content-Signal: search=yes\n"  # a usage preference: read
    b"Sitemap:\n"  # 11: empty
    b"Host: a.test\n"
    b"Host: b.test\n"  # 13: only the first Host is read
    b"just words\n"  # 14
    b"Useragent: other\n"  # 15: accepted typo
    b"Disallow: /fine\n"
)


def by_line(found: list[Finding]) -> dict[int, str]:
    return {finding.line: finding.why for finding in found}


def test_each_kind_of_line_is_named_with_its_number() -> None:
    assert by_line(lint(FILE)) == {
        1: "Disallow line before any User-agent line: ignored",
        4: "accepted typo: 'Disalow' read as Disallow",
        5: "missing colon: read as 'Disallow: /nocolon'",
        6: "no colon after Disallow, and not one value after it: ignored",
        7: "unknown field 'Foo': ignored",
        8: "Crawl-delay value 'soon' not understood: ignored",
        9: "bytes that are not UTF-8, read as they are (a rule matches them %-encoded)",
        11: "empty Sitemap: ignored",
        13: "another Host line: only the first is read",
        14: "no colon and no known field: ignored",
        15: "accepted typo: 'Useragent' read as User-agent",
    }


def test_what_lint_says_is_what_the_reader_did() -> None:
    robots = RobotsTxt.parse(FILE)
    assert robots.allowed("/early", "bot")  # line 1: ignored
    assert not robots.allowed("/typo", "bot")  # line 4: read as Disallow
    assert not robots.allowed("/nocolon", "bot")  # line 5: read
    assert robots.allowed("/two", "bot")  # line 6: ignored
    assert robots.crawl_delay("bot") is None  # line 8: ignored
    assert robots.explain("/caf%E9", "bot").rule.line == 9  # type: ignore[union-attr]
    assert robots.allowed("/fine", "bot")
    assert not robots.allowed("/fine", "other")  # line 15 began a group
    assert robots.host == "a.test"
    assert robots.sitemaps == []
    # The reader's own count of lines with no key it knows: lines 6, 7, 14, and
    # the Content-Signal line (read apart, as a usage preference).
    assert robots.unknown_lines == 3 + len(robots.usage_lines) == 4


def test_a_clean_file_has_no_finding() -> None:
    assert lint(b"User-agent: *\nDisallow: /x  # why\nAllow: /x/y\n\nSitemap: /s.xml\n") == []


def test_each_line_is_printed_as_line_text_why() -> None:
    found = lint(b"User-agent: *\nDisalow: /x\n")
    assert [str(f) for f in found] == ["2: Disalow: /x — accepted typo: 'Disalow' read as Disallow"]


def test_the_part_past_the_size_limit_is_named() -> None:
    content = b"User-agent: *\nDisallow: /a\nDisallow: /b\nDisallow: /c\n"
    found = lint(content, max_size=30)
    assert [(f.line, f.text) for f in found] == [(3, "Disallow: /b")]
    assert "past the size limit of 30 bytes (the file has 53)" in found[0].why
    robots = RobotsTxt.parse(content, max_size=30)
    assert not robots.allowed("/a", "bot")
    assert robots.allowed("/b", "bot")


def test_lines_are_numbered_as_the_reader_numbers_them() -> None:
    # CR, LF and CRLF each end a line (SPEC 1); the BOM is no line.
    found = lint(b"\xef\xbb\xbfUser-agent: *\r\nFoo: 1\rDisalow: /x\nBar: 2\n")
    assert [f.line for f in found] == [2, 3, 4]
    rule = (
        RobotsTxt.parse(b"\xef\xbb\xbfUser-agent: *\r\nFoo: 1\rDisalow: /x\n")
        .explain("/x", "bot")
        .rule
    )
    assert rule is not None
    assert rule.line == 3


def test_text_that_is_no_utf8_or_has_control_characters_prints() -> None:
    (finding,) = lint(b"User-agent: *\nX\x01y: \xff\n")
    assert finding.text == "X\\x01y: \\xff"
    assert finding.why == "unknown field 'X\\\\x01y': ignored"


def test_unknown_lines_agree_with_the_reader_over_the_corpus() -> None:
    # Lint's "ignored" lines without a known key are the reader's unknown lines.
    for name, body in load().files.items():
        robots = RobotsTxt.parse(body)
        found = lint(body)
        unknown = [
            f
            for f in found
            if f.why.startswith(("unknown field", "no colon", "no field name"))
            or "usage preference" in f.why
        ]
        # The reader counts the lines it reads aside (usage, License) among its unknown ones.
        data, _ = read_bytes(body, DEFAULT_MAX_SIZE)
        aside = len(robots.usage_lines) + len(license_lines(data))
        assert len(unknown) + aside == robots.unknown_lines, name


# doubts: is it a robots.txt at all?


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"<!DOCTYPE html>\n<html><body>Not found</body></html>\n", "starts like an HTML"),
        (b"  <html>\n<head><title>x</title></head>\n", "starts like an HTML"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "NUL bytes"),
        (b"hello\nworld\n", "no line of it is a robots.txt line"),
    ],
)
def test_what_is_no_robots_txt_is_said_to_be(content: bytes, why: str) -> None:
    assert any(why in reason for reason in doubts(content)), doubts(content)


@pytest.mark.parametrize(
    "content",
    [b"", b"# only a comment\n", b"User-agent: *\nDisallow:\n", b"Sitemap: /s.xml\n<p>\n"],
)
def test_a_robots_txt_raises_no_doubt(content: bytes) -> None:
    assert doubts(content) == []


# The command.


def write(tmp_path: Path, content: bytes) -> str:
    path = tmp_path / "robots.txt"
    path.write_bytes(content)
    return str(path)


def test_lint_command_prints_one_line_per_finding_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "lint", write(tmp_path, b"User-agent: *\nDisalow: /x\nFoo: 1\n"))
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "2: Disalow: /x — accepted typo: 'Disalow' read as Disallow",
        "3: Foo: 1 — unknown field 'Foo': ignored",
    ]


def test_lint_command_exits_0_on_a_clean_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "lint", write(tmp_path, b"User-agent: *\nDisallow: /x\n"))
    assert (code, out, err) == (0, "no line ignored or read leniently\n", "")


def test_lint_command_max_size(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, b"User-agent: *\nDisallow: /a\nDisallow: /b\n")
    assert run(capsys, "lint", path)[0] == 0
    code, out, _ = run(capsys, "lint", "--max-size", "30", path)
    assert code == 1
    assert out.startswith("3: Disallow: /b — past the size limit of 30 bytes")


@pytest.mark.parametrize("argv", [["lint"], ["lint", "/nonexistent/robots.txt"]])
def test_lint_command_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1


def test_licence_and_plural_signal_lines_are_read_not_reported() -> None:
    body = b"License: https://example.com/license.xml\nUser-agent: *\nContent-Signals: search=yes\n"
    assert lint(body) == []
    assert [f.line for f in lint(body + b"Licence: misspelt\n")] == [4]


def test_license_lines_past_those_read_are_named_as_not_read() -> None:
    lines = [f"License: https://example.com/{n}.xml" for n in range(MAX_LICENSES + 2)]
    body = "\n".join([*lines, "User-agent: *", "Disallow: /x", ""]).encode()
    found = lint(body)
    assert [f.line for f in found] == [MAX_LICENSES + 1, MAX_LICENSES + 2]
    assert all(
        f.why == f"a License line past the first {MAX_LICENSES}, not read (MAX_LICENSES)"
        for f in found
    )
