"""The ``robotrules`` command line: ``check`` and ``compare``, exit statuses, errors (SPEC 7)."""

from __future__ import annotations

import configparser
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import scrapy_robotrules
from scrapy_robotrules.engine.cli.main import main
from tests.helpers import REPO_ROOT
from tests.helpers.cli import run

ROBOTS = """\
User-agent: *
Disallow: /private
Allow: /private/ok

User-agent: Bot
Disallow: /
"""
# Line 2: Disallow: /private; line 3: Allow: /private/ok; line 6: Disallow: / for Bot.

FOLDERS = "User-agent: *\nDisallow: /folder1/\nAllow: /folder1/myfile.html\n"


@pytest.fixture
def robots(tmp_path: Path) -> str:
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    return str(path)


def write(tmp_path: Path, content: str) -> str:
    path = tmp_path / "other.txt"
    path.write_text(content)
    return str(path)


def lines(out: str) -> list[str]:
    """The lines of ``out`` with runs of blanks (column padding) made one space."""
    return [" ".join(line.split()) for line in out.splitlines()]


def robotrules(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """``python -m scrapy_robotrules argv`` in a child process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "scrapy_robotrules", *argv],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


# check: one line per URL.


def test_check_allowed_line(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    code, out, err = run(capsys, "check", robots, "http://a.com/public")
    assert code == 0
    assert err == ""
    assert lines(out) == ["allowed http://a.com/public no rule matches in User-agent: * (line 1)"]


def test_check_disallowed_line_names_rule_and_line(
    capsys: pytest.CaptureFixture[str], robots: str
) -> None:
    code, out, _ = run(capsys, "check", robots, "http://a.com/private/x")
    assert code == 1
    assert lines(out) == ["disallowed http://a.com/private/x Disallow: /private (line 2)"]


def test_check_allowing_rule_is_named_too(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    code, out, _ = run(capsys, "check", robots, "/private/ok")
    assert code == 0
    assert lines(out) == ["allowed /private/ok Allow: /private/ok (line 3)"]


def test_check_one_line_per_url_in_order(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    urls = ["/a", "/private", "/private/ok", "/b"]
    _, out, _ = run(capsys, "check", robots, *urls)
    got = [row.split()[:2] for row in lines(out)]
    assert got == [
        ["allowed", "/a"],
        ["disallowed", "/private"],
        ["allowed", "/private/ok"],
        ["allowed", "/b"],
    ]


def test_check_exit_0_when_all_allowed(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    code, _, _ = run(capsys, "check", robots, "/a", "/private/ok", "/robots.txt")
    assert code == 0


def test_check_exit_1_when_any_disallowed(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    code, _, _ = run(capsys, "check", robots, "/a", "/private", "/b")
    assert code == 1


def test_check_says_robots_txt_is_always_allowed(
    capsys: pytest.CaptureFixture[str], robots: str
) -> None:
    code, out, _ = run(capsys, "check", robots, "--agent", "Bot", "/robots.txt")
    assert code == 0
    assert out.startswith("allowed")
    assert "/robots.txt itself is always allowed" in out


def test_check_says_when_no_group_applies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "User-agent: Bot\nDisallow: /\n")
    code, out, _ = run(capsys, "check", path, "--agent", "Nobody", "/x")
    assert code == 0
    assert "no group applies to 'nobody'" in out


def test_check_agent_is_reduced_to_its_product_token(
    capsys: pytest.CaptureFixture[str], robots: str
) -> None:
    code, out, _ = run(capsys, "check", robots, "--agent", "Bot/2.1 (+https://x)", "/public")
    assert code == 1
    assert "Disallow: / (line 6)" in out


def test_check_default_agent_is_the_wildcard(
    capsys: pytest.CaptureFixture[str], robots: str
) -> None:
    code, _, _ = run(capsys, "check", robots, "/public")
    assert code == 0


def test_check_agent_match_substring(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    token, _, _ = run(capsys, "check", robots, "--agent", "RoBot", "/public")
    substring, out, _ = run(
        capsys, "check", robots, "--agent", "RoBot", "--agent-match", "substring", "/public"
    )
    assert token == 0
    assert substring == 1
    assert "(line 6)" in out


def test_check_precedence_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, FOLDERS)
    specific, _, _ = run(capsys, "check", path, "/folder1/myfile.html")
    first, out, _ = run(
        capsys, "check", path, "--precedence", "first-match", "/folder1/myfile.html"
    )
    assert specific == 0
    assert first == 1
    assert "Disallow: /folder1/ (line 2)" in out


def test_dash_reads_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"User-agent: *\nDisallow: /from-stdin\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, _ = run(capsys, "check", "-", "/from-stdin/x")
    assert code == 1
    assert "Disallow: /from-stdin (line 2)" in out


def test_max_size_limits_what_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "User-agent: *\nDisallow: /a\nDisallow: /b\n")
    code, _, _ = run(capsys, "check", path, "--max-size", "30", "/b")
    assert code == 0
    code, _, _ = run(capsys, "check", path, "--max-size", "30", "/a")
    assert code == 1


# --robots-url.


ABSOLUTE = "User-agent: *\nDisallow: http://a.com/abs\n"


def test_robots_url_makes_absolute_url_rules_resolve(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, ABSOLUTE)
    code, out, _ = run(capsys, "check", path, "--robots-url", "http://a.com/robots.txt", "/abs")
    assert code == 1
    assert "Disallow: http://a.com/abs (line 2)" in out


def test_absolute_url_rules_are_ignored_without_a_robots_url(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, ABSOLUTE)
    code, _, _ = run(capsys, "check", path, "/abs")
    assert code == 0


def test_robots_url_of_another_origin_ignores_the_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, ABSOLUTE)
    code, _, _ = run(capsys, "check", path, "--robots-url", "http://b.com/robots.txt", "/abs")
    assert code == 0


def test_robots_url_defaults_to_the_first_absolute_urls_origin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, ABSOLUTE)
    code, out, _ = run(capsys, "check", path, "/elsewhere", "http://a.com/abs")
    assert code == 1
    assert "Disallow: http://a.com/abs (line 2)" in out


# compare.


def test_compare_header_names_every_mode(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, out, _ = run(capsys, "compare", write(tmp_path, FOLDERS), "/x")
    assert lines(out)[0] == "URL most-specific first-match allow-first"


def test_compare_marks_disagreement(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # SPEC 5 worked example: first-match disallows, the other two allow.
    code, out, _ = run(capsys, "compare", write(tmp_path, FOLDERS), "/folder1/myfile.html")
    assert code == 1
    assert out.splitlines()[1].startswith("! /folder1/myfile.html")
    assert lines(out)[1] == (
        "! /folder1/myfile.html allowed (line 3) disallowed (line 2) allowed (line 3)"
    )


def test_compare_marks_only_the_urls_that_disagree(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    urls = ["/folder1/x", "/folder1/myfile.html", "/y"]
    code, out, _ = run(capsys, "compare", write(tmp_path, FOLDERS), *urls)
    assert code == 1
    marks = [row[:2] for row in out.splitlines()[1:]]
    assert marks == ["  ", "! ", "  "]


def test_compare_second_worked_example(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "User-agent: *\nAllow: /\nDisallow: /cgi-bin\n")
    code, out, _ = run(capsys, "compare", path, "/cgi-bin/x")
    assert code == 1
    assert lines(out)[1] == "! /cgi-bin/x disallowed (line 3) allowed (line 2) allowed (line 2)"


def test_compare_exit_0_when_all_agree(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "compare", write(tmp_path, FOLDERS), "/folder1/x", "/y")
    assert code == 0
    assert "!" not in out
    # Agreeing on "disallowed" is still agreement.
    assert lines(out)[1] == "/folder1/x" + " disallowed (line 2)" * 3


def test_compare_has_no_precedence_option(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    code, out, err = run(capsys, "compare", robots, "/x", "--precedence", "first-match")
    assert code == 2
    assert out == ""
    assert "--precedence" in err


# Usage errors: exit 2, one line on stderr, no traceback.


def assert_usage_error(code: int, out: str, err: str, *words: str) -> None:
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("robotrules")
    assert "error" in err
    assert "Traceback" not in err
    for word in words:
        assert word in err


def test_unknown_option(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    assert_usage_error(*run(capsys, "check", robots, "/x", "--bogus"), "--bogus")


def test_bad_precedence_choice(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    result = run(capsys, "check", robots, "/x", "--precedence", "longest")
    assert_usage_error(*result, "longest", "most-specific", "first-match", "allow-first")


def test_bad_agent_match_choice(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    result = run(capsys, "check", robots, "/x", "--agent-match", "regex")
    assert_usage_error(*result, "regex", "token", "substring")


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.txt")
    assert_usage_error(*run(capsys, "check", missing, "/x"), missing)


def test_directory_instead_of_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert_usage_error(*run(capsys, "check", str(tmp_path), "/x"))


def test_no_url(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    assert_usage_error(*run(capsys, "check", robots), "URL")


def test_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert_usage_error(*run(capsys))


def test_unknown_command(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    assert_usage_error(*run(capsys, "frob", robots, "/x"), "frob")


@pytest.mark.parametrize("value", ["0", "-5", "abc"])
def test_bad_max_size(capsys: pytest.CaptureFixture[str], robots: str, value: str) -> None:
    assert_usage_error(*run(capsys, "check", robots, "/x", "--max-size", value), "--max-size")


# --help.


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in ("check", "compare", "lint", "page", "audit", "archive"):
        assert command in out


@pytest.mark.parametrize(
    ("command", "options"),
    [
        (
            "check",
            [
                "--agent",
                "--agent-match",
                "--robots-url",
                "--max-size",
                "--precedence",
                "--strict",
                "--help",
            ],
        ),
        (
            "compare",
            ["--agent", "--agent-match", "--robots-url", "--max-size", "--strict", "--help"],
        ),
    ],
)
def test_help_lists_every_option(
    capsys: pytest.CaptureFixture[str], command: str, options: list[str]
) -> None:
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    for option in options:
        assert option in out
    assert "ROBOTS_FILE" in out
    assert "URL" in out


# A real process: python -m scrapy_robotrules.


def test_module_runs_check(robots: str) -> None:
    done = robotrules("check", robots, "/public", "/private/x")
    assert done.returncode == 1
    assert done.stderr == ""
    assert lines(done.stdout) == [
        "allowed /public no rule matches in User-agent: * (line 1)",
        "disallowed /private/x Disallow: /private (line 2)",
    ]


def test_module_exit_0_when_all_allowed(robots: str) -> None:
    assert robotrules("check", robots, "/public").returncode == 0


def test_module_reads_stdin() -> None:
    done = robotrules("check", "-", "/x", stdin=b"User-agent: *\nDisallow: /x\n")
    assert done.returncode == 1
    assert "Disallow: /x (line 2)" in done.stdout


def test_the_lint_command_says_it_found_nothing(tmp_path: Path) -> None:
    done = robotrules("lint", write(tmp_path, "User-agent: *\nDisallow: /x\n"))
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "no line ignored or read leniently\n",
        "",
    )


def test_module_compare(tmp_path: Path) -> None:
    done = robotrules("compare", write(tmp_path, FOLDERS), "/folder1/myfile.html", "/y")
    assert done.returncode == 1
    assert [row[:2] for row in done.stdout.splitlines()[1:]] == ["! ", "  "]


def test_module_usage_error_is_one_line(tmp_path: Path) -> None:
    done = robotrules("check", str(tmp_path / "missing.txt"), "/x")
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "missing.txt" in done.stderr


def test_version_is_the_packages() -> None:
    done = robotrules("--version")
    assert (done.returncode, done.stdout) == (0, f"robotrules {scrapy_robotrules.__version__}\n")


def test_package_data_names_only_files_that_exist() -> None:
    root = REPO_ROOT
    config = configparser.ConfigParser()
    config.read(root / "setup.cfg")
    for package, patterns in config["options.package_data"].items():
        for pattern in patterns.replace(",", " ").split():
            assert list((root / package).glob(pattern)), f"{package}/{pattern} matches nothing"


USAGE_ROBOTS = (
    "User-Agent: *\n"
    "Content-Signal: search=yes, ai-train=no\n"
    "Allow: /\n"
    "Disallow: /never/\n"
    "Content-Usage: /ai-ok/ search=n\n"
)


def test_check_shows_usage_preferences(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_text(USAGE_ROBOTS)
    assert main(["check", str(path), "https://e.com/a", "https://e.com/never/x"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == [
        "usage:",
        "train-ai:",
        "disallowed",
        "<-",
        "robots.txt",
        "line",
        "2:",
        "Content-Signal:",
        "search=yes,",
        "ai-train=no",
    ]
    assert "no usage preferences apply" in out[-1]


def test_check_purpose_refused_by_usage_preferences(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "robots.txt"
    path.write_text(USAGE_ROBOTS)
    assert main(["check", str(path), "https://e.com/a", "--purpose", "search"]) == 0
    assert main(["check", str(path), "https://e.com/ai-ok/x", "--purpose", "search"]) == 1
    out = capsys.readouterr().out
    assert "disallowed  https://e.com/ai-ok/x  usage preferences refuse search" in out


# Input that is wrong: a URL no crawler could request, a file that is no robots.txt.


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://[::1", "Invalid IPv6 URL"),
        ("not a url", "no scheme or host"),
        ("", "empty"),
        ("http://", "no scheme or host"),
        ("example.com/page", "no scheme or host"),
    ],
)
@pytest.mark.parametrize("command", ["check", "compare"])
def test_a_url_that_is_no_url_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], robots: str, command: str, url: str, why: str
) -> None:
    # Checked before any answer: no line for the good URL either.
    result = run(capsys, command, robots, "http://a.com/public", url)
    assert_usage_error(*result, f"not a URL: {url!r}", why)


@pytest.mark.parametrize("url", ["/", "/a?b=c", "//a.com/x", "https://[::1]:8080/x", "ftp://h/x"])
def test_paths_and_absolute_urls_are_urls(
    capsys: pytest.CaptureFixture[str], robots: str, url: str
) -> None:
    code, out, err = run(capsys, "check", robots, url)
    assert (code, err) == (0, "")
    assert out.startswith("allowed")


HTML_PAGE = b"<!DOCTYPE html>\n<html><head><title>Not found</title></head></html>\n"


def test_a_file_that_is_no_robots_txt_is_answered_with_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(HTML_PAGE)
    code, out, err = run(capsys, "check", str(path), "/x")
    # Answered as a crawler would read it: no line is a rule, so allowed.
    assert code == 0
    assert out.startswith("allowed")
    assert err == (
        f"robotrules: warning: {path} does not look like a robots.txt (it starts like an HTML"
        " or XML page; no line of it is a robots.txt line): read as one, as a crawler would\n"
    )


def test_strict_makes_a_file_that_is_no_robots_txt_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    code, out, err = run(capsys, "check", "--strict", str(path), "/x")
    assert (code, out) == (2, "")
    assert err.startswith(f"robotrules: error: {path} does not look like a robots.txt (")
    assert "NUL bytes" in err
    assert len(err.splitlines()) == 1


def test_strict_answers_about_a_robots_txt(capsys: pytest.CaptureFixture[str], robots: str) -> None:
    assert run(capsys, "check", "--strict", robots, "/private") == (
        1,
        "disallowed  /private  Disallow: /private (line 2)\n",
        "",
    )
