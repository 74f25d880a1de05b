"""``robotrules audit``, ``archive`` and ``compare --builtin``: the operator's commands.

``audit`` reads an audit trail (:mod:`..operator_tools.audit_trail`) and says, per origin, how
many requests were forbidden and by which rules, which origins' robots.txt
stayed unreachable and for how long, and which robots.txt were slowest.
``archive`` prints a robots.txt body that a shared store archived, by the
SHA-256 an audit line names it with (SPEC 8: the file that decided).
``compare --builtin`` adds Protego, the parser of Scrapy's built-in
middleware, beside the three precedence modes (SPEC 5, 7), so a team
leaving the built-in middleware sees which URLs change. None fetches
anything from a site. Protego is imported only when asked for.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from scrapy_robotrules.engine.cli.input_files import add_input_argument, opened_input
from scrapy_robotrules.engine.digests import sha256_of
from scrapy_robotrules.engine.operator_tools.audit_trail import (
    AuditSummary,
    read_lines,
    summarise,
)
from scrapy_robotrules.engine.robots.precedence import MOST_SPECIFIC, PRECEDENCE_MODES
from scrapy_robotrules.engine.robots.robotstxt import Decision, RobotsTxt
from scrapy_robotrules.engine.stores import (
    KEEP_ARCHIVE,
    StoreError,
    open_backend,
    redact_url,
    store_kind,
)
from scrapy_robotrules.engine.stores.naming import sqlite_path

__all__ = [
    "add_archive_command",
    "add_audit_command",
    "add_builtin_option",
    "report",
    "run_archive",
    "run_audit",
    "run_builtin_compare",
]

BUILTIN = "protego"


def add_audit_command(commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``audit`` to the ``robotrules`` sub-commands."""
    audit = commands.add_parser(
        "audit",
        help="summarise a ROBOTRULES_AUDIT file",
        description="Per origin: requests forbidden and the rules that forbade them; origins"
        " whose robots.txt stayed unreachable, and for how long; the slowest robots.txt"
        " fetches. Lines that cannot be read are counted, not fatal. Exit status 0, or 2 on"
        " a usage error (such as a file that cannot be read).",
    )
    add_input_argument(audit, "audit_file", "FILE", "the audit trail (JSON lines)")
    audit.add_argument(
        "--top",
        type=int,
        default=10,
        help="origins, rules per origin and fetches listed in each part (default: 10)",
    )


def add_archive_command(commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``archive`` to the ``robotrules`` sub-commands."""
    archive = commands.add_parser(
        "archive",
        help="print a robots.txt body archived in a shared store, by its SHA-256",
        description="Print, byte for byte, the robots.txt body that a crawl with"
        " ROBOTRULES_STORE = STORE archived under SHA256 (the robots_sha256 or sha256 of an"
        " audit line). Exit status 0, 1 when the store holds no body under that SHA-256,"
        " 2 on a usage error (such as a store that cannot be read).",
    )
    archive.add_argument(
        "store", metavar="STORE", help="the crawl's ROBOTRULES_STORE (sqlite:... or redis://...)"
    )
    archive.add_argument("sha256", metavar="SHA256", help="the body's SHA-256, 64 hex digits")


_SHA256 = re.compile(r"[0-9a-f]{64}")


def run_archive(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: BinaryIO, err: TextIO
) -> int:
    """Run ``robotrules archive``; returns the exit status."""
    url, sha = args.store, args.sha256.strip().lower()
    shown = redact_url(url)
    if not _SHA256.fullmatch(sha):
        parser.error(f"not a SHA-256: {args.sha256!r} (64 hex digits)")
    try:
        kind = store_kind(url)
    except ValueError as exc:
        parser.error(str(exc))
    if kind == "memory":
        parser.error("the memory store keeps no archive: name the crawl's sqlite or redis store")
    if kind == "sqlite" and not Path(sqlite_path(url)).is_file():
        parser.error(f"cannot read {shown}: no such file")  # opening would create it
    try:
        backend = open_backend(url, timeout=5.0)
    except (ValueError, ImportError) as exc:
        parser.error(redact_url(url, str(exc)))
    try:
        body = backend.archived(sha)
    except StoreError as exc:
        parser.error(f"cannot read {shown}: {redact_url(url, exc.problem)}")
    finally:
        backend.close()
    if body is None:
        days = KEEP_ARCHIVE / 86_400
        err.write(
            f"robotrules: no robots.txt archived under {sha} in {shown} (never fetched"
            f" with this store, or last fetched more than {days:.0f} days ago)\n"
        )
        return 1
    if sha256_of(body) != sha:
        err.write(f"robotrules: the body archived under {sha} in {shown} does not match it\n")
        return 1
    out.write(body)
    out.flush()
    return 0


def add_builtin_option(compare: argparse.ArgumentParser) -> None:
    """Add ``--builtin`` to ``robotrules compare``."""
    compare.add_argument(
        "--builtin",
        action="store_true",
        help="add the decision of Protego, the parser of Scrapy's built-in"
        " RobotsTxtMiddleware, fed the file as Scrapy feeds it; URLs where it and any mode"
        " disagree are marked with '!'",
    )


def _many(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}{'es' if word[-1] == 'h' else 's'}"


def _when(seconds: float) -> str:
    moment = dt.datetime.fromtimestamp(seconds, dt.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def report(summary: AuditSummary, *, top: int = 10) -> list[str]:
    """The lines ``robotrules audit`` prints."""
    bad = ""
    if summary.bad_lines:
        where = ", ".join(str(n) for n in summary.first_bad)
        more = ", ..." if summary.bad_lines > len(summary.first_bad) else ""
        bad = f", {summary.bad_lines} bad (line {where}{more})"
    lines = [
        f"{_many(summary.lines, 'line')}: {_many(summary.requests, 'request')},"
        f" {_many(summary.fetches, 'robots.txt fetch')}, {_many(len(summary.origins), 'origin')}"
        f"{bad}"
    ]
    if summary.changes:
        lines.append(f"robots.txt replaced by another file: {_many(summary.changes, 'time')}")
    if summary.modes:
        modes = ", ".join(f"{mode} {count}" for mode, count in sorted(summary.modes.items()))
        lines.append(f"requests by mode: {modes}")
    forbidding = sorted(
        ((o.requests["forbidden"], name, o) for name, o in summary.origins.items()),
        key=lambda item: (-item[0], item[1]),
    )
    forbidding = [item for item in forbidding if item[0]]
    lines.append(f"forbidden, per origin ({_many(len(forbidding), 'origin')}):")
    for count, name, origin in forbidding[:top]:
        total = sum(origin.requests.values())
        shadow = f", {origin.shadow} let through by shadow mode" if origin.shadow else ""
        lines.append(f"  {name}: {count} of {_many(total, 'request')}{shadow}")
        for rule, times in origin.forbidden_by.most_common(top):
            lines.append(f"    {times:>6}  {rule}")
    lines.append(f"unreachable robots.txt ({_many(len(summary.unreachable), 'time')}):")
    for span in summary.unreachable[:top]:
        dropped = summary.origins[span.origin].requests["unreachable"]
        end = "until" if span.recovered else "still unreachable at the end,"
        lines.append(
            f"  {span.origin}: {span.seconds:.1f} s from {_when(span.start)} {end}"
            f" {_when(span.end)} ({_many(span.fetches, 'fetch')}, {dropped} requests dropped)"
        )
    lines.append(f"slowest robots.txt ({min(top, len(summary.slowest))} of {summary.fetches}):")
    for fetch in summary.slowest[:top]:
        status = "no response" if fetch.status is None else str(fetch.status)
        lines.append(f"  {fetch.elapsed:8.3f} s  {fetch.origin}  {status} {fetch.outcome}")
    return lines


def run_audit(args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO) -> int:
    """Run ``robotrules audit``; returns the exit status."""
    if args.top < 1:
        parser.error("--top must be a positive number")
    with opened_input(args.audit_file, parser) as handle:
        summary = summarise(read_lines(handle), slowest=args.top)
    for line in report(summary, top=args.top):
        out.write(line + "\n")
    return 0


def _cell(decision: Decision) -> str:
    verdict = "allowed" if decision.allowed else "disallowed"
    return verdict if decision.rule is None else f"{verdict} (line {decision.rule.line})"


def run_builtin_compare(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    content: bytes,
    robots: RobotsTxt,
    out: TextIO,
) -> int:
    """Run ``robotrules compare --builtin``; returns the exit status (1: any disagreement)."""
    try:
        from protego import Protego
    except ImportError:
        parser.error("--builtin needs Protego, which Scrapy installs: pip install protego")
    # As Scrapy's ProtegoRobotParser reads it: the whole body, bytes that are not
    # UTF-8 dropped.
    builtin = Protego.parse(content.decode("utf-8-sig", errors="ignore"))
    width = max(len(url) for url in args.urls)
    names = (f"{BUILTIN} (Scrapy)", *PRECEDENCE_MODES)
    out.write(f"  {'URL':<{width}}  {''.join(f'{n:<22}' for n in names).rstrip()}\n")
    differ_default = differ_any = 0
    for url in args.urls:
        allowed = bool(builtin.can_fetch(url, args.agent))
        decisions = [
            robots.explain(url, args.agent, mode, args.agent_match) for mode in PRECEDENCE_MODES
        ]
        verdicts = {allowed, *(d.allowed for d in decisions)}
        mark = "!" if len(verdicts) > 1 else " "
        differ_any += mark == "!"
        default = decisions[PRECEDENCE_MODES.index(MOST_SPECIFIC)]
        differ_default += default.allowed != allowed
        cells = ["allowed" if allowed else "disallowed", *map(_cell, decisions)]
        out.write(f"{mark} {url:<{width}}  {''.join(f'{c:<22}' for c in cells).rstrip()}\n")
    out.write(
        f"{BUILTIN} disagrees with {MOST_SPECIFIC} (the default) on {differ_default} of"
        f" {len(args.urls)} URLs; the deciders disagree on {differ_any}\n"
    )
    return 1 if differ_any else 0
