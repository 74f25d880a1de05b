"""The repository's part of the real-robots.txt corpus: build it, and read it back.

The full corpus (3,000 files, ``MANIFEST.tsv``, ``urls.tsv``) lives outside the
repository; the tests need a part of it that travels with every clone. This
module is both ends of that copy:

- ``python -m tests.helpers.corpus_subset CORPUS_DIR`` chooses the files (see
  :func:`choose`), and writes them with their ``MANIFEST.tsv`` and ``urls.tsv``
  rows into ``tests/data/corpus.tar.gz``;
- :func:`load` reads that archive for the tests and benchmarks.

The archive holds ``MANIFEST.tsv``, ``urls.tsv`` (the rows of the chosen files,
in the corpus's order, under the corpus's headers) and ``robots/<file>``. It is
written deterministically (sorted members, no times, no owners), so the same
corpus gives the same archive.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import DATA_DIR

ARCHIVE = DATA_DIR / "corpus.tar.gz"
FILES = 600
"""Files in the subset."""
PER_TAG = 40
"""Files chosen for each MANIFEST tag before the even spread fills the rest."""
TAGS = ("bom8", "cr", "crlf", "empty", "html", "large", "nonutf8", "nul", "utf16")
"""Every tag MANIFEST.tsv uses; the subset holds files of each."""


@dataclass(frozen=True)
class Subset:
    """The corpus part as read: file bodies, their URLs, their MANIFEST rows."""

    files: dict[str, bytes]
    """File name -> raw bytes, in file name order."""
    urls: list[tuple[str, str]]
    """(file name, URL), in urls.tsv order."""
    manifest: list[dict[str, str]]
    """MANIFEST.tsv rows (``file``, ``source_repo``, ``size_bytes``, ``tags``, ...)."""

    def urls_by_file(self) -> dict[str, list[str]]:
        by_file: dict[str, list[str]] = {name: [] for name in self.files}
        for name, url in self.urls:
            by_file[name].append(url)
        return by_file


def read_tsv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE))


def load(archive: Path = ARCHIVE) -> Subset:
    """Read the archive; a missing or damaged archive raises (a test must fail, not skip)."""
    files: dict[str, bytes] = {}
    tables: dict[str, str] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            handle = tar.extractfile(member)
            if handle is None:
                continue
            data = handle.read()
            if member.name.startswith("robots/"):
                files[member.name.removeprefix("robots/")] = data
            else:
                tables[member.name] = data.decode("utf-8")
    manifest = read_tsv(tables["MANIFEST.tsv"])
    urls = [(row["file"], row["url"]) for row in read_tsv(tables["urls.tsv"])]
    return Subset(dict(sorted(files.items())), urls, manifest)


# Building.


def spread(names: Sequence[str], count: int) -> list[str]:
    """``count`` names spread evenly over ``names`` (all of them when fewer)."""
    if count >= len(names):
        return list(names)
    step = len(names) / count
    return [names[int(i * step)] for i in range(count)]


def choose(manifest: list[dict[str, str]], files: int = FILES, per_tag: int = PER_TAG) -> set[str]:
    """The file names of the subset, a function of MANIFEST.tsv alone.

    For each tag, up to ``per_tag`` of the files carrying it, spread evenly
    over them in name order (so every rare tag and every file over 100 KB
    tagged ``large`` is in); then files spread evenly over the rest, in name
    order, until there are ``files``. An even spread by name is a random-like
    sample of sizes and sources, and the same on every run.
    """
    names = sorted(row["file"] for row in manifest)
    tags = {row["file"]: set(filter(None, row["tags"].split(","))) for row in manifest}
    chosen: set[str] = set()
    for tag in sorted({t for ts in tags.values() for t in ts}):
        chosen.update(spread([n for n in names if tag in tags[n]], per_tag))
    rest = [n for n in names if n not in chosen]
    chosen.update(spread(rest, max(files - len(chosen), 0)))
    return chosen


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _rows(text: str, keep: set[str]) -> bytes:
    """The header and the rows of ``text`` (a TSV) whose first field is in ``keep``."""
    # Lines end at "\n" only: str.splitlines would also cut at U+0085 or U+2028 in a URL.
    header, _, body = text.partition("\n")
    kept = [line for line in body.split("\n") if line and line.split("\t", 1)[0] in keep]
    return "\n".join([header, *kept, ""]).encode("utf-8")


def build(corpus: Path, out: Path, files: int = FILES, per_tag: int = PER_TAG) -> set[str]:
    """Write the subset of the corpus directory ``corpus`` to ``out``; return its file names."""
    manifest_text = (corpus / "MANIFEST.tsv").read_text(encoding="utf-8")
    chosen = choose(read_tsv(manifest_text), files, per_tag)
    urls_text = (corpus / "urls.tsv").read_text(encoding="utf-8")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, "MANIFEST.tsv", _rows(manifest_text, chosen))
        _add(tar, "urls.tsv", _rows(urls_text, chosen))
        for name in sorted(chosen):
            _add(tar, f"robots/{name}", (corpus / "robots" / name).read_bytes())
    out.write_bytes(gzip.compress(buffer.getvalue(), compresslevel=9, mtime=0))
    return chosen


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("corpus", type=Path, help="the corpus directory (MANIFEST.tsv, ...)")
    parser.add_argument("-o", "--out", type=Path, default=ARCHIVE, help="default: %(default)s")
    parser.add_argument("--files", type=int, default=FILES, help="default: %(default)s")
    parser.add_argument("--per-tag", type=int, default=PER_TAG, help="default: %(default)s")
    args = parser.parse_args(argv)
    chosen = build(args.corpus, args.out, args.files, args.per_tag)
    print(f"{len(chosen)} files, {args.out.stat().st_size:,} bytes: {args.out}")


if __name__ == "__main__":
    main()
