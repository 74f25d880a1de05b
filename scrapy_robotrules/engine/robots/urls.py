"""URLs as robots.txt sees them: the matchable path, its percent-normalisation, the origin.

Both sides of a match (a rule's pattern and a URL's path) go through the one
normaliser here, so ``%7e`` and ``~`` or ``%2f`` and ``%2F`` compare alike
(SPEC 4, RFC 9309 §2.2.2). w3lib's ``safe_url_string`` is not used for this:
it leaves ``%7E`` encoded and lower-case hex alone, which RFC 9309 matching must
equate.
"""

from __future__ import annotations

import re
from binascii import hexlify, unhexlify
from collections.abc import Sequence
from urllib.parse import urlsplit

__all__ = [
    "CLEAN_URL",
    "KEEP",
    "RESERVED",
    "UNRESERVED",
    "normalize",
    "normalize_all",
    "normalize_octets",
    "origin_of",
    "request_path",
    "url_path_and_query",
    "url_problem",
]

# Characters that stay as they are (SPEC 4): the unreserved ones, and the
# RFC 3986 reserved set. ``%``, ``*`` and ``$`` are in neither: they always
# need a look. Every character class below is derived from these two.
UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
RESERVED = ":/?#[]@!&'()+,;="
KEEP = re.escape(UNRESERVED + RESERVED)
"""``UNRESERVED`` and ``RESERVED``, ready to stand in a regex character class."""
_NEEDS_WORK = re.compile(f"[^{KEEP}]")
# The same, as bytes: octets with nothing left once these are deleted need no work.
_KEEP_BYTES = (UNRESERVED + RESERVED).encode("ascii")
_LONG = 512
# Input shorter than _LONG octets is normalised a run at a time, never an
# octet at a time: a run of "%" and hex digits (escape by escape), or a run
# of octets to encode. Longer input: see _normalize_long.
_OCTET_WORK = re.compile(f"(%[%0-9A-Fa-f]*)|([^{KEEP}%]+)".encode())
_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})?")
_UNRESERVED_BYTES = UNRESERVED.encode("ascii")
_NOT_UNRESERVED = re.compile(b"[^" + re.escape(_UNRESERVED_BYTES) + b"]+")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21, "ws": 80, "wss": 443}


def _encode(run: bytes) -> bytes:
    return b"%" + hexlify(run, b"%").upper()


def _encode_match(match: re.Match[bytes]) -> bytes:
    return _encode(match.group())


def _decoded(octets: bytes) -> bytes:
    # Unreserved octets are decoded; every other one (reserved ones too:
    # %2F is not "/") stays encoded, in upper-case hex.
    if not octets.translate(None, _UNRESERVED_BYTES):
        return octets
    return _NOT_UNRESERVED.sub(_encode_match, octets)


def _escape(match: re.Match[bytes]) -> bytes:
    hexpair = match.group(1)
    if hexpair is None:
        return b"%25"  # a % not followed by two hex digits
    return _decoded(unhexlify(hexpair))


def _octets(match: re.Match[bytes]) -> bytes:
    """A run of octets to encode, or of ``%`` and hex digits (escape by escape): normalised."""
    run = match.group(1)
    if run is None:
        return _encode(match.group(2))
    return _ESCAPE.sub(_escape, run)


def _to_octets(text: str) -> bytes:
    # surrogateescape restores the raw bytes of an undecodable robots.txt, so
    # they are percent-encoded rather than lost (SPEC 1).
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def normalize(text: str) -> str:
    """Percent-normalise a path (or a piece of a pattern) octet by octet.

    Unreserved ``%xx`` are decoded, other ``%xx`` get upper-case hex, a stray
    ``%`` becomes ``%25``, and every octet outside the unreserved and reserved
    sets (so non-ASCII, controls, space, ``*`` and ``$``) is encoded.
    """
    if _NEEDS_WORK.search(text) is None:
        return text
    octets = _to_octets(text)
    if len(octets) >= _LONG:
        return _normalize_long(octets)
    return _OCTET_WORK.sub(_octets, octets).decode("ascii")


def normalize_octets(octets: bytes) -> bytes:
    """:func:`normalize` of text given as its octets (UTF-8, maybe not valid), as octets.

    A rule's value as the file holds it: normalised without decoding it
    and encoding it back (the same octets, as ``surrogateescape`` gives).
    """
    if not octets.translate(None, _KEEP_BYTES):
        return octets
    if len(octets) >= _LONG:
        return _normalize_long(octets).encode("ascii")
    return _OCTET_WORK.sub(_octets, octets)


def normalize_all(texts: Sequence[str]) -> list[str]:
    """:func:`normalize` of each of ``texts``."""
    return [normalize(text) for text in texts]


# Long input is normalised without Python work per octet or per run: an
# adversary's path alternating kept and encoded characters, or escapes and
# stray "%", would otherwise cost a call per run, tens of thousands of them
# in a long URL. Each octet becomes three output bytes at once, by
# bytes.translate with one table per output byte, NUL where it needs fewer;
# the three are interleaved and the NULs deleted (output never holds a real
# NUL: only kept characters, "%" and hex digits). %xx escapes are found and
# decoded with big-integer bit operations when there are many.
_HEX_DIGITS = b"0123456789ABCDEF"
_HEX_INPUT = b"0123456789ABCDEFabcdef"
_KEEP_SET = frozenset(_KEEP_BYTES)
_UNRESERVED_SET = frozenset(_UNRESERVED_BYTES)
_FEW_ESCAPES = 32


def _table(cell: int, kept: frozenset[int]) -> bytes:
    """Byte ``cell`` (0, 1, 2) of the three an octet becomes, kept ones being ``kept``."""
    out = bytearray()
    for octet in range(256):
        if octet in kept:
            out.append(octet if cell == 0 else 0)
        else:
            out.append((ord("%"), _HEX_DIGITS[octet >> 4], _HEX_DIGITS[octet & 15])[cell])
    return bytes(out)


_LITERAL_CELLS = tuple(_table(cell, _KEEP_SET) for cell in range(3))
_ESCAPED_CELLS = tuple(_table(cell, _UNRESERVED_SET) for cell in range(3))
# Bit 0: "%"; bit 1: a hex digit.
_CLASS = bytes((octet == ord("%")) | (octet in _HEX_INPUT) << 1 for octet in range(256))
_HEX_VALUE = bytes(int(chr(octet), 16) if octet in _HEX_INPUT else 0 for octet in range(256))
_LITERAL_RUN = re.compile(f"[^{KEEP}]+".encode())


def _interleave(cells: list[bytes]) -> str:
    out = bytearray(3 * len(cells[0]))
    for index, cell in enumerate(cells):
        out[index::3] = cell
    return bytes(out).translate(None, b"\x00").decode("ascii")


def _literal(octets: bytes) -> str:
    """Octets with no escape in them: kept ones stay, the others are encoded.

    Short input is encoded run by run, by a regex callback; long input
    becomes its three output cells by ``bytes.translate`` and is
    interleaved, with no call per run. A fast path: its plain reference,
    run by run whatever the length, is in
    ``tests/helpers/plain_references.py``.
    """
    if len(octets) < _LONG:
        return _LITERAL_RUN.sub(_encode_match, octets).decode("ascii")
    return _interleave([octets.translate(table) for table in _LITERAL_CELLS])


def _normalize_long(octets: bytes) -> str:
    """:func:`normalize` of 512 octets or more, with no Python work per octet or per run.

    An adversary's path alternating what is kept and what changes would
    cost a callback per run, read as short input is. A fast path: its
    plain reference, run by run, is in ``tests/helpers/plain_references.py``.
    """
    escapes = octets.count(b"%")
    if escapes == 0:
        return _literal(octets)
    if escapes <= _FEW_ESCAPES:
        return _by_escapes(octets)
    return _many_escapes(octets)


def _by_escapes(octets: bytes) -> str:
    """Octets holding a few ``%``: each escape decoded alone, the text between in bulk."""
    first, *parts = octets.split(b"%")
    out = [_literal(first)]
    for part in parts:
        pair = part[:2]
        if len(pair) == 2 and not pair.translate(None, _HEX_INPUT):
            out.append(_decoded(unhexlify(pair)).decode("ascii"))
            out.append(_literal(part[2:]))
        else:
            out.append("%25")
            out.append(_literal(part))
    return "".join(out)


def _many_escapes(octets: bytes) -> str:
    """Octets holding many ``%``: every escape found and decoded at once.

    Big-integer masks over the whole input, where :func:`_by_escapes`
    decodes escape by escape. A fast path: its plain reference is in
    ``tests/helpers/plain_references.py``.
    """
    size = len(octets)

    def number(data: bytes) -> int:
        return int.from_bytes(data, "big")

    # Byte i is bits 8*(size-1-i) up, so "<< 7" puts bit 1 of byte i+1 at
    # bit 0 of byte i, "<< 15" that of byte i+2: bit 0 of byte i is then set
    # for a "%" followed by two hex digits, and nothing else is.
    classes = number(octets.translate(_CLASS))
    starts = (classes & (classes << 7) & (classes << 15)) * 0xFF
    tails = (starts >> 8) | (starts >> 16)
    values = number(octets.translate(_HEX_VALUE))
    decoded = ((values << 12) | (values << 16)) & starts
    source = number(octets)
    octet_of = (source ^ ((source ^ decoded) & starts)).to_bytes(size, "big")
    literal = ((1 << 8 * size) - 1) ^ (starts | tails)
    cells = []
    for cell in range(3):
        as_literal = number(octet_of.translate(_LITERAL_CELLS[cell])) & literal
        as_escape = number(octet_of.translate(_ESCAPED_CELLS[cell])) & starts
        cells.append((as_literal | as_escape).to_bytes(size, "big"))
    return _interleave(cells)


# An absolute URL whose path needs no normalisation: the common case, taken
# in one C call. Group 1 is the path (maybe empty), params and query.
_PATH_KEEP = re.escape(UNRESERVED + RESERVED.replace("#", ""))
CLEAN_URL = re.compile(
    f"[A-Za-z][A-Za-z0-9+.\\-]*://[^/?#]*((?:[/?][{_PATH_KEEP}]*)?)(?:#.*)?", re.DOTALL
)
_URL_PATH = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*:)?(?://[^/?#]*)?([^#]*)", re.DOTALL)


def url_path_and_query(url: str) -> str:
    """What follows scheme and authority in ``url``, fragment dropped, not normalised."""
    match = _URL_PATH.match(url)  # every part is optional: it always matches
    assert match is not None
    return match.group(1)


def request_path(url: str) -> str:
    """The part of ``url`` that rules match: path (``/`` if empty), params, query.

    ``url`` may be absolute (``http://h/p?q``), scheme-relative (``//h/p``) or
    a bare path (``/p``). The fragment is dropped. The result is normalised.

    The same URL is often read again at once: a crawler asks for each of
    its agents, or decides and then explains, or checks for ``/robots.txt``
    first. The last URL read and its path are kept (one pair, for the
    whole process, replaced in one assignment: safe across threads). A
    fast path: its plain reference, which reads the URL every time, is in
    ``tests/helpers/plain_references.py``.
    """
    last = _LAST[0]
    if url == last[0]:
        return last[1]
    path = _path_of(url)
    _LAST[0] = (url, path)
    return path


def _path_of(url: str) -> str:
    """:func:`request_path`'s reading of ``url``.

    An absolute URL whose path needs no normalising (most) is read by one
    regex; any other has its path and query cut out, then normalised. A
    fast path: its plain reference, which cuts and normalises every URL, is
    in ``tests/helpers/plain_references.py``.
    """
    clean = CLEAN_URL.fullmatch(url)
    if clean is not None:
        path = clean.group(1)
        return path if path[:1] == "/" else "/" + path
    path = url_path_and_query(url)
    if path[:1] != "/":
        path = "/" + path
    return normalize(path)


_LAST = [("", "/")]
"""The last URL :func:`request_path` read, and its path (``""`` reads as ``/``)."""


# The common case, taken without urlsplit: http(s), a lower-case ASCII host
# name, maybe a port, then the path (or nothing).
_PLAIN_ORIGIN = re.compile(r"(https?)://([a-z0-9][a-z0-9.-]*)(?::([0-9]{1,5}))?(?=[/?#]|\Z)")


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-cased, default ports folded.

    ``http://a.com`` and ``https://a.com`` are different origins (SPEC 8).
    Raises ``ValueError`` with a readable message when ``url`` has no origin.
    """
    plain = _PLAIN_ORIGIN.match(url)
    if plain is not None:
        scheme, host, port = plain.groups()
        if port is None:
            return f"{scheme}://{host}"
        number = int(port)
        if number == _DEFAULT_PORTS[scheme]:
            return f"{scheme}://{host}"
        if number <= 65535:
            return f"{scheme}://{host}:{number}"
    return _origin_by_urlsplit(url)


def url_problem(url: str) -> str | None:
    """Why ``url`` is neither a bare path nor a URL with an origin; ``None`` when it is one.

    Rules are matched against any text (SPEC 4), so a decision about an
    empty string or ``http://[::1`` would still be given: a command line
    asks this first and refuses what no crawler would ever request.
    """
    if not url:
        return "empty"
    if url[:1] == "/" and url[:2] != "//":
        return None
    try:
        origin_of("http:" + url if url[:2] == "//" else url)
    except ValueError as exc:
        return str(exc).rpartition(": ")[2]
    return None


def _origin_by_urlsplit(url: str) -> str:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"cannot tell the origin of {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if not scheme or not host:
        raise ValueError(f"cannot tell the origin of {url!r}: no scheme or host")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise ValueError(f"cannot tell the origin of {url!r}: bad host name") from None
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"
