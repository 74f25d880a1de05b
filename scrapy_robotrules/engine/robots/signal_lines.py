"""robots.txt lines that are signals, not rules: usage preferences and RSL licences.

These lines go beyond robots.txt: to SPEC 2 they are unknown lines, which
end no group. ``Content-Usage`` and ``Content-Signal`` (aipref attach §3,
Cloudflare's Content Signals; meant by :mod:`..usage`) and ``License``
(RSL 1.0) are read with the file, so every store re-reads them with it: a
file without any costs a substring search or two.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple
from urllib.parse import urljoin

from scrapy_robotrules.engine.robots.reading import decode_value

__all__ = [
    "LICENSES_NAMED",
    "LICENSE_NAMED_CHARS",
    "MAX_LICENSES",
    "MAX_LICENSE_URL",
    "MAX_USAGE_LINES",
    "License",
    "license_lines",
    "name_licenses",
    "read_licenses",
    "resolve_licenses",
    "usage_lines",
]

_WS = rb"[ \t\v\f]"
"""Blanks around a key and its colon, as :mod:`.reading` reads them (never a line break)."""

_USAGE_LINES = re.compile(
    rb"\n" + _WS + rb"*((?i:content-usage|content-signals?))" + _WS + rb"*:" + _WS
    + rb"*([^#\n]*)"
)  # fmt: skip
MAX_USAGE_LINES = 1024
"""``Content-Usage`` and ``Content-Signal`` lines kept of one file; the rest are not read."""


def usage_lines(data: bytes) -> tuple[tuple[int, str, str], ...]:
    """``(line, key lower-cased, value)`` of the ``Content-Usage`` and ``Content-Signal`` lines.

    ``data`` as given by :func:`read_bytes`. ``Content-Signals``, a plural
    some sites write, is read too (its key kept as ``content-signals``). A
    file without either key costs a substring search or two; keys in mixed
    case beyond ``Content-`` and ``CONTENT-`` (``cOnTeNt-usage``) are only
    read when one of those is in the file.
    """
    if b"ontent-" not in data and b"ONTENT-" not in data:
        return ()
    lowered = data.lower()  # an HTML page says "Content-Type": no line is tried
    if b"content-usage" not in lowered and b"content-signal" not in lowered:
        return ()
    return _numbered(_USAGE_LINES, data, MAX_USAGE_LINES)


def _numbered(
    pattern: re.Pattern[bytes], data: bytes, cap: int
) -> tuple[tuple[int, str, str], ...]:
    """``(line, key lower-cased, value)`` of the first ``cap`` lines ``pattern`` finds."""
    buf = b"\n" + data
    found: list[tuple[int, str, str]] = []
    line = 0
    counted = 0
    for match in pattern.finditer(buf, 0, len(buf) - 1):
        if len(found) == cap:
            break
        line += buf.count(b"\n", counted, match.start() + 1)
        counted = match.start() + 1
        found.append((line, match.group(1).decode("ascii").lower(), decode_value(match.group(2))))
    return tuple(found)


class License(NamedTuple):
    """A robots.txt ``License`` line (RSL 1.0): where the site's licence document is."""

    url: str
    """Resolved against the robots.txt URL when written relative (RSL asks for an absolute URL)."""
    line: int

    def __str__(self) -> str:
        return f"robots.txt line {self.line}: License: {self.url}"


_LICENSE_LINES = re.compile(
    rb"\n" + _WS + rb"*((?i:license))" + _WS + rb"*:" + _WS + rb"*([^#\n]*)"
)
MAX_LICENSES = 16
"""``License`` lines kept of one file; the rest are not read (and a note says so)."""
MAX_LICENSE_URL = 2048
"""Characters kept of one licence URL (as long as the longest URLs browsers take); the
rest is cut (and a note says so)."""
LICENSES_NAMED = 3
"""Licences named in a refusal's note or an item's mark; the others are counted."""
LICENSE_NAMED_CHARS = 256
"""Characters of a licence URL shown in a refusal's note or an item's mark."""


def license_lines(data: bytes) -> tuple[tuple[int, str], ...]:
    """``(line, value)`` of each ``License`` line with a value, wherever it stands.

    RSL 1.0: the directive is global, tied to no ``User-agent``, and a file
    may hold several (as ``Sitemap``, file-wide). A file without the word
    costs a substring search or two. At most :data:`MAX_LICENSES` lines,
    each value cut at :data:`MAX_LICENSE_URL` characters.
    """
    return tuple((line, value[:MAX_LICENSE_URL]) for line, value in _license_values(data)[0])


def unread_license_lines(data: bytes) -> tuple[int, ...]:
    """The numbers of the ``License`` lines past the first :data:`MAX_LICENSES`, not read.

    For ``robotrules lint``, which names the lines a crawl does not read;
    the file is already within its size cap, so this costs one pass over it.
    """
    if b"icense" not in data and b"ICENSE" not in data:
        return ()
    found = _numbered(_LICENSE_LINES, data, len(data))
    return tuple(line for line, _, _ in found[MAX_LICENSES:])


def _license_values(data: bytes) -> tuple[list[tuple[int, str]], int | None]:
    """The first :data:`MAX_LICENSES` ``License`` lines as written, and the line of the next
    one (not read), if any."""
    if b"icense" not in data and b"ICENSE" not in data:
        return [], None
    found = _numbered(_LICENSE_LINES, data, MAX_LICENSES + 1)
    unread = found[MAX_LICENSES][0] if len(found) > MAX_LICENSES else None
    return [(line, value) for line, _, value in found[:MAX_LICENSES] if value], unread


def read_licenses(data: bytes, robots_url: str | None) -> tuple[list[License], list[str]]:
    """The file's licences (:func:`resolve_licenses` of its ``License`` lines), and what was cut.

    A site's licence line costs what a line costs: at most
    :data:`MAX_LICENSES` of them, each URL of at most :data:`MAX_LICENSE_URL`
    characters. The notes say what was left out, one line each.
    """
    values, unread = _license_values(data)
    notes = [
        f"robots.txt line {line}: a License value of {len(value):,} characters,"
        f" cut to its first {MAX_LICENSE_URL:,} (MAX_LICENSE_URL)"
        for line, value in values
        if len(value) > MAX_LICENSE_URL
    ]
    if unread is not None:
        notes.append(
            f"robots.txt line {unread}: License lines past the first {MAX_LICENSES}"
            " not read (MAX_LICENSES)"
        )
    return resolve_licenses(values, robots_url), notes


def resolve_licenses(lines: Sequence[tuple[int, str]], robots_url: str | None) -> list[License]:
    """RSL 1.0 ``License`` lines: an absolute URL as written, a path resolved against the file's.

    Any other value (RSL asks for an absolute URL) is kept as written: it is
    what the site said, shown, never fetched. A user name or password in a
    URL is dropped: licences reach logs, marks and the audit trail. A URL
    is kept to :data:`MAX_LICENSE_URL` characters, resolved or not (cut once
    its user name and password are out, never through them).
    """
    found: dict[str, License] = {}  # one per URL, the first line naming it
    for line, value in lines:
        url = value
        if robots_url is not None and value.startswith("/") and not value.startswith("//"):
            try:
                url = urljoin(robots_url, value)
            except ValueError:
                url = value
        url = _without_userinfo(url)[:MAX_LICENSE_URL]
        found.setdefault(url, License(url, line))
    return list(found.values())


def name_licenses(licenses: Sequence[License]) -> str:
    """The licences as a refusal's note or an item's mark names them: a few, each URL short.

    What is named costs the same whatever the file says: the first
    :data:`LICENSES_NAMED` licences, each URL shown to
    :data:`LICENSE_NAMED_CHARS` characters, then how many more there are
    (the view, ``explain()`` and the audit trail's fetch line list them all).
    """
    named = []
    for lic in licenses[:LICENSES_NAMED]:
        url = lic.url
        if len(url) > LICENSE_NAMED_CHARS:
            url = f"{url[:LICENSE_NAMED_CHARS]}... ({len(url):,} characters)"
        named.append(f"robots.txt line {lic.line}: License: {url}")
    more = len(licenses) - LICENSES_NAMED
    if more > 0:
        named.append(f"{more} more License lines")
    return "; ".join(named)


def _without_userinfo(url: str) -> str:
    scheme, slashes, rest = url.partition("://")
    if not slashes:
        return url
    ends = [i for i in map(rest.find, "/?#") if i >= 0]
    authority = rest[: min(ends, default=len(rest))]
    if "@" not in authority:
        return url
    return f"{scheme}://{authority.rpartition('@')[2]}{rest[len(authority) :]}"
