"""Usage preferences in response headers: ``Content-Usage`` and ``Content-Signal`` lines read.

A ``Content-Usage`` header is metadata of its response (aipref attach §2):
its lines are one RFC 9651 field. ``Content-Signal`` (and the plural
``Content-Signals`` some sites send) lines are statements each. TDMRep's
headers (§6.2) are in :mod:`.tdmrep`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scrapy_robotrules.engine.usage.structured import MAX_MEMBERS, MAX_VALUE_CHARS, parse_dictionary
from scrapy_robotrules.engine.usage.vocabulary import (
    CONTENT_SIGNAL,
    CONTENT_USAGE,
    HEADER,
    Statement,
    aipref_members,
    make_statement,
)

__all__ = ["header_statements", "read_headers"]


def _text(value: str | bytes) -> str:
    if isinstance(value, bytes):
        return value[: MAX_VALUE_CHARS + 1].decode("latin-1")
    return value[: MAX_VALUE_CHARS + 1]


def header_statements(
    content_usage: Iterable[str | bytes] = (),
    content_signal: Iterable[str | bytes] = (),
    content_signals: Iterable[str | bytes] = (),
) -> list[Statement]:
    """Statements of the ``Content-Usage`` and ``Content-Signal`` headers of a response.

    :func:`read_headers` without its notes.
    """
    return read_headers(content_usage, content_signal, content_signals)[0]


def read_headers(
    content_usage: Iterable[str | bytes] = (),
    content_signal: Iterable[str | bytes] = (),
    content_signals: Iterable[str | bytes] = (),
) -> tuple[list[Statement], list[str]]:
    """Statements of every ``Content-Usage`` and ``Content-Signal`` header line, and notes.

    ``content_signals``: lines of the plural ``Content-Signals`` field some
    sites send, read as ``Content-Signal`` lines that follow the others (and
    named as written). Every line is read, each up to
    :data:`MAX_VALUE_CHARS` characters, so the work follows the bytes of the
    headers; what is kept does not: the statements are the lines that
    decide (a few at most), the notes say how many lines were read besides.
    """
    statements, notes = _content_usage([_text(value) for value in content_usage])
    signal_lines = [("", _text(value)) for value in content_signal]
    signal_lines += [("Content-Signals", _text(value)) for value in content_signals]
    signals, signal_notes = _content_signal(signal_lines)
    return statements + signals, notes + signal_notes


def _content_usage(lines: list[str]) -> tuple[list[Statement], list[str]]:
    """The ``Content-Usage`` field: its lines are one dictionary (RFC 9651 §4.2).

    Read as if joined with commas, each line parsed in turn: a repeated key
    keeps its last value (§4.2.2) and a line that does not parse leaves the
    whole field unparsable. The statements are the lines holding the
    values that count, so ``explain()`` shows the line that decided.
    """
    if len(lines) <= 1:
        return [make_statement(HEADER, CONTENT_USAGE, line, line=1) for line in lines], []
    members: dict[str, tuple[object, int]] = {}
    for number, line in enumerate(lines, 1):
        try:
            if not line.strip(" \t"):
                raise ValueError("an empty line among several")
            for key, item in parse_dictionary(line).items():
                members.pop(key, None)
                members[key] = (item, number)
            if len(members) > MAX_MEMBERS:
                raise ValueError(f"more than {MAX_MEMBERS} members")
        except ValueError as exc:
            error = f"unparsable: {exc}"
            statement = Statement(
                HEADER, CONTENT_USAGE, line[:MAX_VALUE_CHARS], line=number, error=error
            )
            return [statement], [f"Content-Usage: {len(lines)} header lines read as one field"]
    statements = []
    for number in sorted({number for _, number in members.values()}):
        preferences, unknown, data = aipref_members(
            (key, item) for key, (item, decided) in members.items() if decided == number
        )
        value = lines[number - 1][:MAX_VALUE_CHARS]
        statements.append(
            Statement(HEADER, CONTENT_USAGE, value, preferences, number, None, unknown, data=data)
        )
    note = (
        f"Content-Usage: {len(lines)} header lines read as one field, a repeated key keeping"
        f" its last value: {len(lines) - len(statements)} lines hold none that counts"
    )
    return statements, [note] if len(statements) < len(lines) else []


def _content_signal(lines: Sequence[tuple[str, str]]) -> tuple[list[Statement], list[str]]:
    """``Content-Signal`` lines, (name as written, value): each a statement, combined as vocab
    §5.1 says.

    Any "no" disallows, else any "yes" allows: a line saying again what an
    earlier one said changes nothing, and is counted in a note rather than
    kept. Kept: the first line, each line saying something new of a
    purpose, and the first with parts not understood or data.
    """
    statements: list[Statement] = []
    said: set[tuple[str, bool]] = set()
    other_kept = False
    number = 0
    first_plural = next((i for i, (name, _) in enumerate(lines) if name), len(lines))
    for number, (name, line) in enumerate(lines, 1):
        # Lines are numbered within their field, as the response holds them.
        within = number - first_plural if name else number
        statement = make_statement(HEADER, CONTENT_SIGNAL, line, line=within, name=name)
        new = set(statement.preferences.items()) - said
        other = bool(statement.unknown or statement.data)
        if not statements or new or (other and not other_kept):
            statements.append(statement)
            said |= new
            other_kept = other_kept or other
    repeated = number - len(statements)
    if not repeated:
        return statements, []
    return statements, [
        f"Content-Signal: {number} header lines read; {repeated} say again what the lines"
        " listed say, and are not listed"
    ]
