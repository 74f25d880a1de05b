"""CPU instructions each fast path of the engine saves over its plain reference (callgrind).

Usage::

    python -m benchmarks.fast_paths [--files N] [--paths NAME ...] [--jobs J]
                                    [--no-adversarial] [--protego] [--json PATH]

Needs ``valgrind``. A fast path is a function of the engine written for
speed, with a plain reference of the same work in
``tests/helpers/plain_references.py`` (:data:`FAST_PATHS` lists them, and
what each stands for). The tests compare each with its reference on
generated inputs; this script says what each one is worth.

The workload is ``engine.py``'s "parse + fresh checks", ours only:
``--files`` (300) files of the corpus, spread evenly over it as
``_common.load_corpus`` picks them, are parsed, and each of their URLs is
checked with the agents ``examplebot`` and ``Googlebot`` on the freshly
parsed objects. It runs under ``valgrind --tool=callgrind``, which counts
the instructions the worker's process executes: once with the package as
it is, and once per fast path with that path's plain reference put in its
place (in every module of the package that holds it, in the worker's
process only: nothing in the package switches at run time). A fast path
made for an adversarial input is also run on that input (:data:`INPUTS`:
a path or a file built to cost a plain form the most), as it is and with
its plain reference. Each count is the worker's less that of a worker that
prepares the same input and stops (Python's start, the imports, reading the
corpus or building the input), and ``PYTHONHASHSEED`` is fixed, so that
two runs of the corpus workload count within about a tenth of a million
instructions of each other (0.02%). ``--protego`` also counts the corpus
workload done by Protego (given text decoded as Scrapy decodes it for
Protego, as ``engine.py`` does) and prints the package's count over
Protego's: the engine's ratio to Protego in instructions, not time.

A fast path is kept when its plain reference costs the corpus workload at
least 1% more (:data:`CORPUS_THRESHOLD`), or costs the adversarial input it
exists for at least 10% more (:data:`ADVERSARIAL_THRESHOLD`): where the
plain form does Python work per octet, per run or per rule that the fast
one does per input. The verdict column says which. Under callgrind a run
is about fifty times slower than without it: the default run (every path
and input, 36 runs) takes about ten minutes with ``--jobs 2``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks import cpu_instructions
from benchmarks._common import environment, finish, progress, render_table

CORPUS = "corpus"
AS_IS = "as is"
IDLE = "idle"
PROTEGO = "protego"
"""The corpus workload done by Protego, the parser users would pick instead."""
AGENTS = ("examplebot", "Googlebot")
CORPUS_THRESHOLD = 0.01
"""A fast path is kept when its plain reference costs the corpus this much more, ..."""
ADVERSARIAL_THRESHOLD = 0.10
"""... or costs the adversarial input it exists for this much more."""
PACKAGE = "scrapy_robotrules"


class FastPath(NamedTuple):
    """A fast function (``module:name`` or ``module:Class.name``) and its plain reference."""

    target: str
    plain: str
    """Its plain reference: a function of ``tests.helpers.plain_references`` (of the
    file, for a method of ``RobotsTxt``)."""
    stands_for: str
    """What the fast form does instead of the plain one."""
    adversarial: str | None = None
    """The input of :data:`INPUTS` it exists for, if any."""


_ROBOTS = "scrapy_robotrules.engine.robots"

FAST_PATHS: dict[str, FastPath] = {
    "long normalisation": FastPath(
        f"{_ROBOTS}.urls:_normalize_long",
        "normalize_long",
        "512 octets or more percent-normalised by bytes.translate tables and big-integer"
        " masks, not run by run",
        "long paths",
    ),
    "many escapes": FastPath(
        f"{_ROBOTS}.urls:_many_escapes",
        "many_escapes",
        "the escapes of long input decoded by big-integer masks, not escape by escape",
        "long paths",
    ),
    "literal cells": FastPath(
        f"{_ROBOTS}.urls:_literal",
        "literal",
        "long input without escapes encoded as three cells by bytes.translate, not run by run",
        "long paths",
    ),
    "octets together": FastPath(
        f"{_ROBOTS}.star_columns:_normalised",
        "normalised",
        "rule values normalised as octets joined by #, not one by one",
        "escaped rules",
    ),
    "cutting test": FastPath(
        f"{_ROBOTS}.star_columns:needs_cutting",
        "needs_cutting",
        "star rules' values joined and scanned in C, not one by one",
        "escaped rules",
    ),
    "tails together": FastPath(
        f"{_ROBOTS}.star_columns:_normalised_tails",
        "normalised_tails",
        "the pieces of rules of several stars normalised joined by #, not piece by piece",
        "several stars",
    ),
    "automaton columns": FastPath(
        f"{_ROBOTS}.rule_index:_needled_columns",
        "needled_columns",
        "the automaton's columns (needle, code, priority, shape) made column by column",
        "hostile literals",
    ),
    "column reading": FastPath(
        f"{_ROBOTS}.groups:read_rules",
        "read_rules",
        "a group's member lines cut into columns by one regex, sorted by kind in C",
    ),
    "kept URL": FastPath(
        f"{_ROBOTS}.urls:request_path",
        "request_path",
        "the last URL read and its path kept, for the next question",
    ),
    "clean URL": FastPath(
        f"{_ROBOTS}.urls:_path_of",
        "path_of",
        "a URL whose path needs no normalising read by one regex",
    ),
    "file decision": FastPath(
        f"{_ROBOTS}.robotstxt:RobotsTxt._decide",
        "decide",
        "the view's key and the /robots.txt test inlined",
    ),
    "token selection": FastPath(
        f"{_ROBOTS}.robotstxt:RobotsTxt._selected",
        "selected",
        "groups selected from the flat User-agent columns, no tuple per group",
        "many groups",
    ),
}
"""The fast paths measured, by name."""


# --------------------------------------------------------------------------
# The adversarial inputs: each built (untimed by subtraction), then run
# --------------------------------------------------------------------------


def _build_paths() -> list[str]:
    from benchmarks._hostile import LONG_PATH, cases

    # From the plain prefix's path (100,000 "a", clean) on: those that need no
    # matching, only normalising.
    return [path for _, _, path in cases(LONG_PATH)[8:]]


def _normalise_paths(paths: list[str]) -> None:
    from scrapy_robotrules.engine.robots.urls import normalize

    for path in paths:
        normalize(path)


def _first_check(body: bytes) -> None:
    """Parse ``body`` and ask it once (which reads the group's rules and indexes them)."""
    from scrapy_robotrules import RobotsTxt

    RobotsTxt.parse(body, "https://example.com/robots.txt").allowed("/x", "bot")


def _hostile_family(name: str) -> Callable[[], bytes]:
    def build() -> bytes:
        from benchmarks._hostile import family

        return family(name)

    return build


def _several_stars() -> bytes:
    from benchmarks._hostile import FAMILY_SIZE, wildcard_file

    return wildcard_file(FAMILY_SIZE)


def _one_star_rules() -> bytes:
    """About 500 KiB of rules of one star and no text after it, or a ``$``: no needle."""
    rules = "".join(f"Disallow: /p{i}/*\nAllow: /q{i}$\n" for i in range(12_000))
    return ("User-agent: *\n" + rules).encode()


def _many_groups() -> bytes:
    """About 250 KiB of one-rule groups, each naming its own crawler."""
    groups = "".join(f"User-agent: bot{i}\nDisallow: /{i}\n\n" for i in range(8_000))
    return (groups + "User-agent: *\nDisallow: /private\n").encode()


def _asked_by_agents(body: bytes) -> None:
    """Parse ``body`` and ask it with a crawler named in it, and with one that is not."""
    from scrapy_robotrules import RobotsTxt

    robots = RobotsTxt.parse(body, "https://example.com/robots.txt")
    for agent in ("bot4000", "otherbot", "bot7999/1.0"):
        robots.allowed("/x", agent)


def _hostile_checks() -> tuple[Any, list[str]]:
    """The hostile file parsed and asked once, and paths of its own needles (then random)."""
    from benchmarks._hostile import SHORT_PATH, family, family_paths, needle_paths
    from scrapy_robotrules import RobotsTxt

    body = family("distinct literals")
    robots = RobotsTxt.parse(body, "https://example.com/robots.txt")
    robots.allowed("/x", "bot")
    paths = [*needle_paths(body, SHORT_PATH, 3), family_paths()[SHORT_PATH]]
    return robots, paths


def _checks(prepared: tuple[Any, list[str]]) -> None:
    robots, paths = prepared
    for path in paths:
        robots.allowed(path, "bot")


class Input(NamedTuple):
    build: Callable[[], Any]
    run: Callable[[Any], None]
    what: str


INPUTS: dict[str, Input] = {
    "long paths": Input(
        _build_paths,
        _normalise_paths,
        "paths of 100,000 characters to percent-normalise: clean, escapes, stray %,"
        " non-ASCII, kept and encoded characters alternating (_hostile.cases)",
    ),
    "escaped rules": Input(
        _hostile_family("escapes"),
        _first_check,
        "500 KiB of Disallow: /*%7e<5 letters>%2f, parsed and checked once (_hostile.family)",
    ),
    "several stars": Input(
        _several_stars,
        _first_check,
        "500 KiB of Disallow: /*x<i>*y<i % 97>*.php$, parsed and checked once",
    ),
    "hostile literals": Input(
        _hostile_family("distinct literals"),
        _first_check,
        "500 KiB of Disallow: /*<8 letters or digits>, parsed and checked once",
    ),
    "one-star rules": Input(
        _one_star_rules,
        _first_check,
        "24,000 rules /p<i>/* and /q<i>$ (no needle: no automaton), parsed and checked once",
    ),
    "hostile checks": Input(
        _hostile_checks,
        _checks,
        "the same file, parsed and asked once beforehand, then asked about three"
        " 2,083-character paths of its own literals and a random one",
    ),
    "many groups": Input(
        _many_groups,
        _asked_by_agents,
        "8,000 one-rule groups, parsed and asked by three crawlers",
    ),
}


# --------------------------------------------------------------------------
# The worker: in the process callgrind counts
# --------------------------------------------------------------------------


def swap_in_plain(path: FastPath) -> None:
    """Put ``path``'s plain reference in its place, wherever the package holds it."""
    from tests.helpers import plain_references

    module_name, _, qualname = path.target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *outer, name = qualname.split(".")
    for part in outer:
        owner = getattr(owner, part)
    fast, plain = getattr(owner, name), getattr(plain_references, path.plain)
    if outer:
        setattr(owner, name, plain)
        return
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith(PACKAGE) and vars(module).get(name) is fast:
            setattr(module, name, plain)


def _corpus_input(files: int) -> Any:
    from benchmarks._common import load_corpus

    corpus = load_corpus(files)
    inputs = [(f.body, f.robots_url) for f in corpus.files]
    return inputs, corpus.urls


def _corpus_run(prepared: Any) -> None:
    from scrapy_robotrules import RobotsTxt

    inputs, urls = prepared
    parsed = [RobotsTxt.parse(body, url=robots_url) for body, robots_url in inputs]
    for index, url in urls:
        robots = parsed[index]
        for agent in AGENTS:
            robots.allowed(url, agent)


def _corpus_run_protego(prepared: Any) -> None:
    """The same work by Protego, given text decoded as Scrapy decodes it for Protego."""
    from protego import Protego

    inputs, urls = prepared
    parsed = [Protego.parse(body.decode("utf-8-sig", errors="ignore")) for body, _ in inputs]
    for index, url in urls:
        robots = parsed[index]
        for agent in AGENTS:
            robots.can_fetch(url, agent)


def worker(argv: Sequence[str]) -> int:
    """``WORKLOAD VARIANT FILES``: prepare the workload, then run it (unless idle)."""
    workload, variant, files = argv[0], argv[1], int(argv[2])
    import protego  # noqa: F401  (the same imports in every variant)

    import scrapy_robotrules.engine.robots  # noqa: F401
    import tests.helpers.plain_references  # noqa: F401

    if workload == CORPUS:
        prepared = _corpus_input(files)
        run: Callable[[Any], None] = _corpus_run_protego if variant == PROTEGO else _corpus_run
    else:
        prepared = INPUTS[workload].build()
        run = INPUTS[workload].run
    if variant not in (IDLE, AS_IS, PROTEGO):
        swap_in_plain(FAST_PATHS[variant])
    if variant != IDLE:
        run(prepared)
    print(json.dumps({"workload": workload, "variant": variant}), flush=True)
    return 0


# --------------------------------------------------------------------------
# The runs and the report
# --------------------------------------------------------------------------


def counted(args: Sequence[str], out: Path, timeout: float) -> tuple[int | None, str]:
    """Instructions of this script's worker run with ``args`` under callgrind (or why not)."""
    totals, _, err = cpu_instructions.counted(args, out, timeout, cache_sim=False, script=__file__)
    return (None, err) if totals is None else (totals["Ir"], "")


def jobs_for(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(workload, variant) of every run: idle and as-is first for each workload."""
    jobs = [(CORPUS, IDLE), (CORPUS, AS_IS)]
    if args.protego:
        jobs.append((CORPUS, PROTEGO))
    jobs += [(CORPUS, name) for name in args.paths]
    if not args.no_adversarial:
        for workload in INPUTS:
            names = [n for n in args.paths if FAST_PATHS[n].adversarial == workload]
            jobs += [(workload, IDLE), (workload, AS_IS)] + [(workload, n) for n in names]
    return jobs


def verdict(corpus: float | None, adversarial: float | None) -> str:
    """Whether the fast form earns its place (see the module's docstring)."""
    if corpus is not None and corpus >= 1 + CORPUS_THRESHOLD:
        return "keep: corpus"
    if adversarial is not None and adversarial >= 1 + ADVERSARIAL_THRESHOLD:
        return "keep: adversarial input"
    return "plain form"


def report(totals: dict[tuple[str, str], int], names: Sequence[str]) -> tuple[list[str], Any]:
    """The table (and its data): instructions per variant, less the idle worker's."""
    net: dict[tuple[str, str], int] = {}
    for (workload, variant), total in totals.items():
        idle = totals.get((workload, IDLE))
        if variant != IDLE and idle is not None:
            net[workload, variant] = total - idle
    fast = net.get((CORPUS, AS_IS))
    rows: list[list[str] | None] = []
    if fast is not None:
        rows.append([AS_IS, f"{fast / 1e6:,.1f} M", "1.000", "", "", ""])
    data: dict[str, Any] = {"corpus as is": fast, "paths": {}}
    for name in names:
        plain = net.get((CORPUS, name))
        corpus = plain / fast if plain is not None and fast else None
        input_name = FAST_PATHS[name].adversarial
        adversarial = None
        cells = ["", ""]
        if input_name is not None:
            base, other = net.get((input_name, AS_IS)), net.get((input_name, name))
            if base and other is not None:
                adversarial = other / base
                cells = [f"{input_name}: {base / 1e6:,.1f} M", f"{adversarial:.3f}"]
        rows.append(
            [
                name,
                "n/a" if plain is None else f"{plain / 1e6:,.1f} M",
                "n/a" if corpus is None else f"{corpus:.3f}",
                *cells,
                verdict(corpus, adversarial),
            ]
        )
        data["paths"][name] = {
            "target": FAST_PATHS[name].target,
            "corpus_plain": plain,
            "corpus_ratio": corpus,
            "adversarial": input_name,
            "adversarial_fast": net.get((input_name, AS_IS)) if input_name else None,
            "adversarial_plain": net.get((input_name, name)) if input_name else None,
            "adversarial_ratio": adversarial,
        }
    headers = [
        "variant (plain reference in place of)",
        "corpus",
        "/ as is",
        "adversarial input, as is",
        "plain / as is",
        "verdict",
    ]
    lines = [render_table(headers, rows)]
    lines.append(
        "corpus: instructions of parsing the files and checking their URLs, less the idle worker's"
    )
    inputs = [[name, f"{net[name, AS_IS] / 1e6:,.1f} M"] for name in INPUTS if (name, AS_IS) in net]
    if inputs:
        lines += ["", render_table(["adversarial input", "as is"], inputs)]
    data["inputs as is"] = {name: net.get((name, AS_IS)) for name in INPUTS}
    protego = net.get((CORPUS, PROTEGO))
    if protego and fast is not None:
        lines.append(
            f"corpus by Protego: {protego / 1e6:,.1f} M; as is / Protego: {fast / protego:.3f}"
        )
        data["corpus protego"] = protego
    return lines, data


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=300, help="corpus files (spread evenly)")
    parser.add_argument(
        "--paths",
        nargs="*",
        choices=list(FAST_PATHS),
        default=list(FAST_PATHS),
        help="fast paths to swap (none: the package as is only)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="runs at once")
    parser.add_argument("--no-adversarial", action="store_true", help="the corpus only")
    parser.add_argument(
        "--protego", action="store_true", help="also the corpus workload by Protego, for a ratio"
    )
    parser.add_argument("--max-time", type=float, default=1800.0, help="seconds per run")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if min(args.files, args.jobs, args.max_time) <= 0:
        parser.error("--files, --jobs and --max-time must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return worker(argv[1:])
    args = parse_args(argv)
    if shutil.which("valgrind") is None:
        print("error: valgrind is not installed (Debian: apt install valgrind)", file=sys.stderr)
        return 2
    # The same hashes, so the same set and dict orders, in every run.
    os.environ["PYTHONHASHSEED"] = "0"
    env = environment()
    print(f"Instructions of the engine's fast paths (callgrind): {env['python']}")
    totals: dict[tuple[str, str], int] = {}
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="robotrules-fast-") as tmp:

        def run(job: tuple[str, str]) -> tuple[tuple[str, str], int | None, str]:
            workload, variant = job
            progress(f"{workload}, {variant} under callgrind ...")
            out = Path(tmp) / f"{workload}-{variant}.callgrind".replace(" ", "_")
            total, err = counted([workload, variant, str(args.files)], out, args.max_time)
            if total is not None:
                progress(f"  {workload}, {variant}: {total / 1e6:,.1f} M")
            return job, total, err

        with ThreadPoolExecutor(args.jobs) as pool:
            for job, total, err in pool.map(run, jobs_for(args)):
                if total is None:
                    failures.append(f"{job}: {err}")
                else:
                    totals[job] = total
    lines, data = report(totals, args.paths)
    print("\n".join(lines))
    print(f"{args.files:,} corpus files, their URLs checked with {' and '.join(AGENTS)}")
    for workload, made in INPUTS.items():
        print(f"{workload}: {made.what}")
    data |= {"environment": env, "args": vars(args)}
    return finish(failures, args.json, data)


if __name__ == "__main__":
    sys.exit(main())
