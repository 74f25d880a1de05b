"""The files the ``robotrules`` commands read: named on the command line, ``-`` for stdin.

Each command names its file with :func:`add_input_argument` and reads it
in :func:`opened_input`, so a file that cannot be read is the same usage
error everywhere (exit status 2, the file's name and the system's reason),
never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import argparse

__all__ = ["add_input_argument", "opened_input"]


def add_input_argument(
    command: argparse.ArgumentParser, dest: str, metavar: str, what: str
) -> None:
    """Add the positional argument naming the file ``command`` reads (``what``), or ``-``."""
    command.add_argument(dest, metavar=metavar, help=f"{what}; - for stdin")


@contextmanager
def opened_input(path: str, parser: argparse.ArgumentParser) -> Iterator[BinaryIO]:
    """``path`` open for reading bytes (stdin's for ``-``, left open).

    An ``OSError`` while it is opened or read is a usage error that names it.
    """
    try:
        if path == "-":
            yield sys.stdin.buffer
        else:
            with open(path, "rb") as handle:
                yield handle
    except OSError as exc:
        parser.error(f"cannot read {path}: {exc.strerror or exc}")
