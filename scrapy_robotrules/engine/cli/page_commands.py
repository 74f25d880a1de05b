"""``robotrules page FILE``: the page-level rules of a saved response, and where each came from.

The file is an HTTP message (``curl -si URL > page.http``: status line,
headers, blank line, body; ``curl -siL`` with its several header blocks
works too, the last one counts) or a bare HTML file. The command is
offline: it reads files, never the network, so what it shows is exactly
what was saved.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, TextIO

from scrapy_robotrules.engine.cli.input_files import add_input_argument, opened_input
from scrapy_robotrules.engine.page.directives import PageDirectives, parse_page_directives
from scrapy_robotrules.engine.page.html import DEFAULT_LIMIT, head_metas
from scrapy_robotrules.engine.robots.agents import AGENT_MATCH_STYLES, TOKEN, product_token

__all__ = ["add_page_command", "read_saved_response", "run_page"]

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_CHARSET = re.compile(r";\s*charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.IGNORECASE)
_BLANK_LINE = re.compile(rb"\r?\n\r?\n")


def add_page_command(commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``page`` to the ``robotrules`` sub-commands."""
    page = commands.add_parser(
        "page",
        help="the page-level rules (X-Robots-Tag, meta robots) of a saved response",
        description="The X-Robots-Tag and robots meta tag rules of a saved response that apply"
        " to the agent, each with where it came from. FILE is an HTTP message (curl -si URL)"
        " or an HTML file; - reads stdin. No URL is fetched. Exit status 0 when the page may"
        " be indexed and its links followed, 1 when noindex, nofollow or a passed"
        " unavailable_after applies, 2 on a usage error.",
    )
    add_input_argument(page, "page_file", "FILE", "saved response or HTML file")
    page.add_argument(
        "--agent",
        default="*",
        help="crawler name or full User-Agent; its product token is matched (default: *,"
        " only the rules for every crawler)",
    )
    page.add_argument(
        "--agent-match",
        choices=AGENT_MATCH_STYLES,
        default=TOKEN,
        help="how crawler names are matched, as for robots.txt groups (default: token)",
    )
    page.add_argument(
        "--max-html",
        type=int,
        default=DEFAULT_LIMIT,
        help=f"bytes of the body read for meta tags (default: {DEFAULT_LIMIT})",
    )


def read_saved_response(data: bytes) -> tuple[list[tuple[str, str]] | None, bytes]:
    """The headers (``None`` for a bare file) and the body of a saved response."""
    headers: list[tuple[str, str]] | None = None
    while data.startswith(b"HTTP/"):
        found = _BLANK_LINE.search(data)
        head, data = (data, b"") if found is None else (data[: found.start()], data[found.end() :])
        headers = []
        for line in head.decode("latin-1").splitlines()[1:]:
            if line[:1] in (" ", "\t") and headers:
                name, value = headers[-1]
                headers[-1] = (name, f"{value} {line.strip()}")
            elif ":" in line:
                name, _, value = line.partition(":")
                headers.append((name.strip().lower(), value.strip()))
    return headers, data


def _rules(args: argparse.Namespace, data: bytes) -> tuple[PageDirectives, str]:
    headers, body = read_saved_response(data)
    content_type = next((v for n, v in headers or () if n == "content-type"), "")
    values = [v for n, v in headers or () if n == "x-robots-tag"]
    html = not content_type or content_type.split(";")[0].strip().lower() in _HTML_TYPES
    charset = _CHARSET.search(content_type)
    metas = (
        head_metas(body, charset[1] if charset else "utf-8", args.max_html, None) if html else []
    )
    page = parse_page_directives(values, metas, args.agent, args.agent_match)
    kind = "a bare file" if headers is None else f"{len(values)} X-Robots-Tag header(s)"
    read = f"{len(metas)} meta tag(s) in the head" if html else f"body not read ({content_type})"
    return page, f"{kind}, {read}"


def run_page(args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO) -> int:
    """Run ``robotrules page``; returns the exit status."""
    if re.match(r"(?i)https?://", args.page_file):
        parser.error(
            "robotrules page reads a saved response and fetches nothing;"
            " save one first: curl -si URL > page.http"
        )
    if args.max_html < 1:
        parser.error("--max-html must be a positive number of bytes")
    with opened_input(args.page_file, parser) as handle:
        data = handle.read()
    page, what = _rules(args, data)
    agent = product_token(args.agent) or "*"
    out.write(f"agent: {agent}; read: {what}\n")
    lines = page.explain()
    if not page.in_effect:
        out.write(f"no restricting rule for {agent}: index and follow\n")
    for line in lines:
        out.write(f"  {line}\n")
    blocked = [
        label
        for label, applies in (
            ("noindex", page.noindex),
            ("nofollow", page.nofollow),
            ("unavailable_after has passed", page.expired()),
        )
        if applies
    ]
    if blocked:
        out.write(f"verdict: {', '.join(blocked)}\n")
        return 1
    out.write("verdict: index and follow\n")
    return 0
