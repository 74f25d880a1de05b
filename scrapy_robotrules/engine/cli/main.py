"""``robotrules``: check URLs against a robots.txt file from the shell, and see why (SPEC 7).

``check`` answers like a crawler would; ``compare`` shows what each
precedence mode (SPEC 5) would decide, so a switch of mode can be judged
before it is made. ``page`` shows the page-level rules of a saved response
(:mod:`.page_commands`); ``audit``, ``archive`` and ``compare --builtin`` are the operator's
(:mod:`.operator_commands`). ``lint`` lists the lines the reader ignored or read
leniently (:mod:`..robots.lint`, SPEC 1). A URL no crawler could request is a usage
error, not a decision; a file that is no robots.txt is read as a crawler
reads it, with a warning (an error with ``--strict``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from scrapy_robotrules import __version__
from scrapy_robotrules.engine.cli.input_files import add_input_argument, opened_input
from scrapy_robotrules.engine.cli.operator_commands import (
    add_archive_command,
    add_audit_command,
    add_builtin_option,
    run_archive,
    run_audit,
    run_builtin_compare,
)
from scrapy_robotrules.engine.cli.page_commands import add_page_command, run_page
from scrapy_robotrules.engine.robots.agents import AGENT_MATCH_STYLES, TOKEN
from scrapy_robotrules.engine.robots.lint import doubts, lint
from scrapy_robotrules.engine.robots.precedence import MOST_SPECIFIC, PRECEDENCE_MODES
from scrapy_robotrules.engine.robots.reading import DEFAULT_MAX_SIZE
from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt
from scrapy_robotrules.engine.robots.urls import origin_of, url_problem
from scrapy_robotrules.engine.usage.preferences import (
    PURPOSES,
    refuse_purposes,
    robots_statements,
    usage_view,
)

__all__ = ["main"]

EXIT_ALLOWED = 0
EXIT_DISALLOWED = 1
EXIT_USAGE = 2
EXIT_LINT_FOUND = 1
# What lint prints on a clean file, so that silence never reads as a hang or a crash.
NOTHING_TO_LINT = "no line ignored or read leniently"


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, never a usage dump or a traceback."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="robotrules",
        description="Check URLs against a robots.txt file and say which rule decides.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def robots_file(sub: argparse.ArgumentParser) -> None:
        add_input_argument(sub, "robots_file", "ROBOTS_FILE", "robots.txt to read")
        sub.add_argument(
            "--max-size",
            type=int,
            default=DEFAULT_MAX_SIZE,
            help=f"bytes of the file to read, as ROBOTRULES_MAX_SIZE (default: {DEFAULT_MAX_SIZE})",
        )
        sub.add_argument(
            "--strict",
            action="store_true",
            help="a file that does not look like a robots.txt (binary, an HTML page) is an"
            " error (exit status 2), not a warning",
        )

    def common(sub: argparse.ArgumentParser) -> None:
        robots_file(sub)
        sub.add_argument(
            "urls",
            metavar="URL",
            nargs="+",
            help="absolute URLs or bare paths (/path?query); anything else is a usage error",
        )
        sub.add_argument(
            "--agent",
            default="*",
            help="crawler name or full User-Agent; its product token is matched (default: *)",
        )
        sub.add_argument(
            "--agent-match",
            choices=AGENT_MATCH_STYLES,
            default=TOKEN,
            help="token: groups naming the exact product token (RFC 9309); substring: the"
            " first group whose name is part of it (1994 spec) (default: token)",
        )
        sub.add_argument(
            "--robots-url",
            help="where the file was fetched from, to resolve absolute-URL rules and"
            " relative sitemaps (default: /robots.txt of the first absolute URL's origin)",
        )

    check = commands.add_parser(
        "check",
        help="allowed or disallowed, with the deciding rule",
        description="One line per URL: allowed or disallowed, the URL, and the deciding rule"
        " with its line number (or why none). Exit status 0 when every URL is allowed,"
        " 1 when any is disallowed, 2 on a usage error.",
    )
    common(check)
    check.add_argument(
        "--precedence",
        choices=PRECEDENCE_MODES,
        default=MOST_SPECIFIC,
        help="which matching rule wins: most-specific (RFC 9309: longest pattern, Allow on a"
        " tie), first-match (1994 spec: first in the file), allow-first (any Allow, then any"
        " Disallow) (default: most-specific)",
    )
    check.add_argument(
        "--purpose",
        action="append",
        choices=PURPOSES,
        default=[],
        help="what the content is for (repeatable): a URL whose robots.txt usage preferences"
        " (Content-Usage, Content-Signal) refuse it is disallowed, as ROBOTRULES_PURPOSES does",
    )
    compare = commands.add_parser(
        "compare",
        help="the decision of every precedence mode, side by side",
        description="The decision of each precedence mode side by side; URLs where the modes"
        " disagree are marked with '!'. Exit status 0 when the modes agree on every URL,"
        " 1 when they disagree on any, 2 on a usage error.",
    )
    common(compare)
    add_builtin_option(compare)
    lint_command = commands.add_parser(
        "lint",
        help="the lines the reader ignored or read leniently, and why",
        description="One line per line of the file that the reader ignored or read leniently:"
        " 'LINE: text — why' (an unknown field, a missing colon, an accepted typo such as"
        " Disalow, a rule before any User-agent line, a value not understood, the part past"
        " --max-size), or one line saying there is none. Exit status 0 when there is none,"
        " 1 when there are some, 2 on a usage error.",
    )
    robots_file(lint_command)
    add_page_command(commands)
    add_audit_command(commands)
    add_archive_command(commands)
    return parser


def _robots_url(given: str | None, urls: Sequence[str]) -> str | None:
    if given is not None:
        return given
    for url in urls:
        try:
            return origin_of(url) + "/robots.txt"
        except ValueError:
            continue
    return None


def _why(decision: Decision) -> str:
    if decision.note and decision.rule is not None:
        return decision.note  # refused by a usage preference, though a rule allows it
    if decision.rule is not None:
        return str(decision.rule)
    return decision.reason.split(": ", 1)[1]


def _short(decision: Decision) -> str:
    verdict = "allowed" if decision.allowed else "disallowed"
    if decision.rule is not None:
        return f"{verdict} (line {decision.rule.line})"
    return verdict


def _write_usage(out: TextIO, robots: RobotsTxt, decision: Decision) -> None:
    """The usage preferences and licences beside a decision, one indented line each, if any."""
    if not robots.usage_lines and not robots.licenses:
        return
    if not decision.allowed:
        decision = robots.explain(
            decision.url, decision.agent, decision.precedence, decision.agent_match
        )
    statements, notes = robots_statements(robots, decision)
    notes = [*notes, *robots.license_notes]  # what of the License lines was cut
    view = usage_view(decision.url, statements, notes=notes, licenses=robots.licenses)
    for line in view.explain():
        if not line.endswith(": unknown"):
            out.write(f"            usage: {line}\n")


def _looks_right(args: argparse.Namespace, content: bytes, err: TextIO) -> bool:
    """Warn (or with ``--strict``, refuse) when the file does not look like a robots.txt.

    A crawler given such a file reads it all the same (SPEC 1: lines it
    cannot read are ignored, so it most likely allows everything), and so
    does ``check``: the warning is for the person who passed the wrong file.
    """
    why = doubts(content, args.max_size)
    if not why:
        return True
    name = "standard input" if args.robots_file == "-" else args.robots_file
    level = "error" if args.strict else "warning"
    err.write(f"robotrules: {level}: {name} does not look like a robots.txt ({'; '.join(why)})")
    err.write("\n" if args.strict else ": read as one, as a crawler would\n")
    return not args.strict


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command == "page":
        return run_page(args, parser, sys.stdout)
    if args.command == "audit":
        return run_audit(args, parser, sys.stdout)
    if args.command == "archive":
        return run_archive(args, parser, sys.stdout.buffer, sys.stderr)
    if args.max_size < 1:
        parser.error("--max-size must be a positive number of bytes")
    for url in getattr(args, "urls", ()):
        problem = url_problem(url)
        if problem is not None:
            parser.error(f"not a URL: {url!r} ({problem}; give an absolute URL or a /path)")
    with opened_input(args.robots_file, parser) as handle:
        content = handle.read()
    if not _looks_right(args, content, sys.stderr):
        return EXIT_USAGE
    if args.command == "lint":
        found = lint(content, args.max_size)
        for finding in found:
            sys.stdout.write(f"{finding}\n")
        if not found:
            sys.stdout.write(f"{NOTHING_TO_LINT}\n")
        return EXIT_LINT_FOUND if found else EXIT_ALLOWED
    robots = RobotsTxt.parse(
        content, _robots_url(args.robots_url, args.urls), max_size=args.max_size
    )
    out = sys.stdout
    if args.command == "compare" and args.builtin:
        return run_builtin_compare(args, parser, content, robots, out)
    if args.command == "check":
        status = EXIT_ALLOWED
        width = max(len(url) for url in args.urls)
        for url in args.urls:
            decision = robots.explain(url, args.agent, args.precedence, args.agent_match)
            if args.purpose and decision.allowed:
                decision = refuse_purposes(robots, decision, args.purpose)
            verdict = "allowed" if decision.allowed else "disallowed"
            out.write(f"{verdict:<10}  {url:<{width}}  {_why(decision)}\n")
            _write_usage(out, robots, decision)
            if not decision.allowed:
                status = EXIT_DISALLOWED
        return status
    status = EXIT_ALLOWED
    width = max(len(url) for url in args.urls)
    columns = [f"{mode:<22}" for mode in PRECEDENCE_MODES]
    out.write(f"  {'URL':<{width}}  {''.join(columns).rstrip()}\n")
    for url in args.urls:
        decisions = [
            robots.explain(url, args.agent, mode, args.agent_match) for mode in PRECEDENCE_MODES
        ]
        differ = len({d.allowed for d in decisions}) > 1
        mark = "!" if differ else " "
        cells = "".join(f"{_short(d):<22}" for d in decisions).rstrip()
        out.write(f"{mark} {url:<{width}}  {cells}\n")
        if differ:
            status = EXIT_DISALLOWED
    return status


def run() -> NoReturn:
    """Console-script entry point."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        code = 0
    sys.exit(code)
