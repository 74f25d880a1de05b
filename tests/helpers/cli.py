"""Running the robotrules command line in-process."""

from __future__ import annotations

import pytest

from scrapy_robotrules.engine.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``robotrules argv``."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def run_binary(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, bytes, str]:
    """Exit status, stdout (bytes: commands that print files) and stderr of ``robotrules argv``."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsysbinary.readouterr()
    return code, out, err.decode()
