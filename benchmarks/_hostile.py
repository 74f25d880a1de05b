"""The hostile robots.txt files and paths of ``adversarial.py``: how they are built.

Families of about 500 KiB of wildcard rules (distinct literals, shared
prefixes, ``$``, escapes, non-ASCII, nested literals), and paths built to
cost each file the most (its own literals, runs, broken runs).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

FAMILY_SIZE = 500 * 1024
SHORT_PATH = 2083
"""Scrapy's default URL length limit."""
LONG_PATH = 100_000
_ALNUM = string.ascii_letters + string.digits


def cases(length: int) -> list[tuple[str, str, str]]:
    """(name, rule value, path)."""
    a_path = "/" + "a" * length
    ab_path = "/" + "ab" * (length // 2)
    return [
        ("13 stars, no match", "/*a*a*a*a*a*a*a*a*a*a*a*a*b", a_path),
        ("1,000 stars, no match", "/" + "*a" * 1000 + "*b", a_path),
        ("1,000 stars, match", "/" + "*a" * 1000 + "*b", a_path + "b"),
        ("literal run of 5,000", "/" + "a" * 5000 + "*b", a_path),
        ("star then literal run of 5,000", "/*" + "a" * 4999 + "b", a_path),
        ("anchored piece, no match", "/*a$", ab_path),
        ("anchored long piece", "/*" + "ab" * 200 + "$", ab_path),
        ("anchored after stars", "/*a*b*a*b*a$", ab_path),
        ("plain prefix", "/" + "a" * 1000, a_path),
        ("percent-encoded path", "/%41%42", "/" + "%41" * (length // 3)),
        ("non-ASCII path", "/é", "/" + "é" * (length // 2)),
        # Paths that alternate what normalisation keeps and what it changes:
        # a normaliser that works run by run makes a call per run.
        ("stray % and spaces", "/*x$", "/" + "% " * (length // 2)),
        ("kept and encoded alternating", "/*x$", "/" + "a " * (length // 2)),
        ("escapes and kept alternating", "/*x$", "/" + "a%2F" * (length // 4)),
        ("two kinds of escapes alternating", "/*x$", "/" + "%41%2F" * (length // 6)),
        ("non-ASCII and ASCII alternating", "/*x$", "/" + "aé" * (length // 3)),
    ]


def wildcard_file(size: int) -> bytes:
    """A robots.txt of about ``size`` bytes: one group, nothing but wildcard rules."""
    lines = [b"User-agent: *"]
    total = len(lines[0]) + 1
    i = 0
    while total < size:
        line = f"Disallow: /*x{i}*y{i % 97}*.php$".encode()
        lines.append(line)
        total += len(line) + 1
        i += 1
    return b"\n".join(lines) + b"\n"


def family(name: str, size: int = FAMILY_SIZE, seed: int = 1) -> bytes:
    """A robots.txt of about ``size`` bytes: one group of wildcard rules of one kind."""
    rnd = random.Random(seed)

    def word(k: int = 8) -> str:
        return "".join(rnd.choices(_ALNUM, k=k))

    makers: dict[str, Callable[[int], str]] = {
        "distinct literals": lambda i: f"Disallow: /*{word()}",
        "shared prefixes": lambda i: f"Disallow: /shop/catalog/*{word()}",
        "anchored ($)": lambda i: f"{rnd.choice(['Allow', 'Disallow'])}: /*{word(6)}.php$",
        "escapes": lambda i: f"Disallow: /*%7e{word(5)}%2f",
        "non-ASCII": lambda i: f"Disallow: /*\u00e9{word(4)}\u30c4",
        "nested literals": lambda i: f"Disallow: /*{'a' * (1 + i % 60)}{word(2)}",
    }
    make = makers[name]
    lines = ["User-agent: *"]
    total = len(lines[0]) + 1
    i = 0
    while True:
        line = make(i)
        if total + len(line.encode()) + 1 > size:
            break
        lines.append(line)
        total += len(line.encode()) + 1
        i += 1
    return ("\n".join(lines) + "\n").encode()


FAMILIES = (
    "distinct literals",
    "shared prefixes",
    "anchored ($)",
    "escapes",
    "non-ASCII",
    "nested literals",
)


def family_paths(seed: int = 2) -> dict[int, str]:
    rnd = random.Random(seed)
    return {
        n: "/" + "".join(rnd.choices(_ALNUM + "a" * 40, k=n - 1)) for n in (SHORT_PATH, LONG_PATH)
    }


def needle_paths(body: bytes, length: int, count: int = 3) -> list[str]:
    """Paths of ``length`` characters made of the file's own needles (the text after each
    rule's last ``*``), each starting at another rule: every rule they hold is found."""
    needles = [
        line.rsplit(b"*", 1)[1].rstrip(b"$").decode() for line in body.splitlines() if b"*" in line
    ]
    paths = []
    for k in range(count):
        start = k * len(needles) // count
        text = "".join(needles[start:] + needles[:start])
        while len(text) < length:
            text += text
        paths.append("/" + text[: length - 1])
    return paths


NESTED_MORE = {
    "nested + /*a .. /*a{64}": ("a", 1),
    "nested + /*ab .. /*(ab){32}": ("ab", 2),
}
"""The nested literals with nested rules of one unit besides, 64 characters at most:
(unit, shortest rule's length). Case b, and the same with a unit of two."""


def path_family(name: str) -> bytes:
    """The body a row of the paths table checks: a family, or the nested literals and more."""
    if name not in NESTED_MORE:
        return family(name)
    unit, shortest = NESTED_MORE[name]
    more = "".join(f"Disallow: /*{(unit * 64)[:k]}\n" for k in range(shortest, 65)).encode()
    return family("nested literals", FAMILY_SIZE - len(more)) + more


def broken_runs(length: int, every: int, seed: int, unit: str = "a") -> str:
    """Runs of ``unit`` broken by two random characters every ``every``: no piece repeats."""
    rnd = random.Random(seed)
    run = (unit * every)[: every - 2]
    runs = [run + "".join(rnd.choices(_ALNUM, k=2)) for _ in range(length // every + 1)]
    return ("/" + "".join(runs))[:length]


def adversarial_paths(name: str, body: bytes, length: int, count: int) -> dict[str, list[str]]:
    """Paths built against one family: its needles, and for nested literals runs of ``a``
    (of ``ab`` for the rules of ``ab``)."""
    found = {"own needles": needle_paths(body, length, count)}
    if name == "nested literals" or name in NESTED_MORE:
        unit = NESTED_MORE.get(name, ("a", 1))[0]
        found[f"run of {unit}"] = [("/" + unit * length)[:length]]
        for every in (442, 64):
            runs = [broken_runs(length, every, k, unit) for k in range(count)]
            found[f"{unit} runs broken /{every}"] = runs
    return found
