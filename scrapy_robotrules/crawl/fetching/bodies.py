"""A robots.txt body read only as far as it is parsed (RFC 9309 §2.5: the first 500 KiB).

The download stops once :func:`read_limit` bytes arrived (``.download``),
whatever size the server announces; what arrived is the start of the file.
Scrapy's ``HttpCompressionMiddleware`` unpacks a whole body, and refuses one
that grows past ``download_maxsize``: a gzip bomb robots.txt would then be
refused for ever, and its site never crawled. So a robots.txt response
(marked by :data:`ROBOTS_META`) has its ``Content-Encoding`` hidden from that
middleware by :class:`RobotsBodyMiddleware`, which sits just before it on
the way back (priority 595; HttpCompressionMiddleware is at 590), and
:func:`decode_body` unpacks it here, stopping at :func:`read_limit` bytes,
or where a download stopped early cut the stream: memory stays bounded, and
the rules at the top of the file apply. robots.txt requests accept gzip and
deflate only (zlib can stop early); a body in another coding is left to
Scrapy, unpacked at most to :data:`UNPACKED_MAX_META` bytes, and one whose
download was stopped cannot be unpacked.

SPEC 1 (the size limit) and 8 (a body that cannot be unpacked is unreachable).
"""

from __future__ import annotations

import codecs
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

__all__ = [
    "ACCEPT_ENCODING",
    "ROBOTS_META",
    "STOPPED_FLAG",
    "UNPACKED_MAX_META",
    "RobotsBodyMiddleware",
    "decode_body",
    "file_start",
    "hidden_encoding",
    "read_limit",
    "response_headers",
]

ROBOTS_META = "_robotrules_robots"
"""Request meta key of the robots.txt requests this package sends."""
ACCEPT_ENCODING = b"gzip, deflate"
"""What a robots.txt request accepts: the codings :func:`decode_body` stops early in."""
HIDDEN_ENCODING = b"X-Robotrules-Content-Encoding"
"""Where :class:`RobotsBodyMiddleware` moves a robots.txt response's ``Content-Encoding``."""
MIDDLEWARE_PRIORITY = 595
"""Just before HttpCompressionMiddleware (590) as responses go back up the chain."""
UNPACKED_MAX_META = "_robotrules_unpacked_max"
"""Request meta key: the ``download_maxsize`` Scrapy's HttpCompressionMiddleware unpacks to.

The robots.txt request itself has none (its download stops at
:func:`read_limit` instead), so a body in a coding this package leaves to
Scrapy gets its bound back from this key just before it is unpacked."""
STOPPED_FLAG = "download_stopped"
"""The flag Scrapy gives a response whose download a ``StopDownload`` ended early."""
READ_PAST = len(codecs.BOM_UTF8) + 1
"""Bytes read past ROBOTRULES_MAX_SIZE: a leading BOM is not counted (SPEC 1), and
one byte more tells whether the file goes on past the limit, and whether its
last line ends there."""

_WBITS = {b"gzip": 16 + zlib.MAX_WBITS, b"x-gzip": 16 + zlib.MAX_WBITS, b"deflate": zlib.MAX_WBITS}


class RobotsBodyMiddleware:
    """Keeps HttpCompressionMiddleware off robots.txt bodies that this package unpacks itself."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls()

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        # ``spider``: Scrapy before 2.14 passes it; later versions do not.
        meta = request.meta
        if not meta.get(ROBOTS_META):
            return response
        codings = _codings(response.headers.getlist(b"Content-Encoding"))
        if not codings:
            return response
        if any(coding not in _WBITS for coding in codings) and STOPPED_FLAG not in response.flags:
            # One zlib cannot stop early in, the whole body at hand: Scrapy's
            # to unpack, within a bound. (Cut short, it cannot be unpacked:
            # hidden like the others, decode_body refuses it.)
            if UNPACKED_MAX_META in meta:
                meta["download_maxsize"] = meta[UNPACKED_MAX_META]
            return response
        headers = response.headers.copy()
        del headers[b"Content-Encoding"]
        headers[HIDDEN_ENCODING] = b", ".join(codings)
        return response.replace(headers=headers)


def hidden_encoding(response: Response) -> list[bytes]:
    """The codings :class:`RobotsBodyMiddleware` kept from Scrapy, in the order applied."""
    return _codings(response.headers.getlist(HIDDEN_ENCODING))


def _codings(values: list[bytes]) -> list[bytes]:
    return [
        coding.strip().lower()
        for value in values
        for coding in value.split(b",")
        if coding.strip() and coding.strip().lower() != b"identity"
    ]


def read_limit(max_size: int) -> int:
    """Bytes of a robots.txt read, as sent and unpacked, for a ``ROBOTRULES_MAX_SIZE``."""
    return max_size + READ_PAST


def file_start(
    body: bytes, codings: list[bytes], max_size: int, *, stopped: bool
) -> tuple[bytes, bool]:
    """The start of the file to parse, unpacked; and whether it is cut short of the limit.

    At most :func:`read_limit` bytes, so that what is kept and named by its
    SHA-256 is the same however the download's last chunk fell. A download
    stopped early (``stopped``) that unpacks to fewer bytes (a compressed
    stream cut) is the start of a larger file all the same: it ends at its
    last line break, as a line cut by the limit is dropped (SPEC 1), and the
    second value says it was cut. Raises as :func:`decode_body` does.
    """
    limit = read_limit(max_size)
    if codings:
        body = decode_body(body, codings, limit, cut=stopped)
    body = body[:limit]
    if not stopped or len(body) >= limit:
        return body, False
    end = max(body.rfind(b"\n"), body.rfind(b"\r"))
    return body[: end + 1], True


def decode_body(body: bytes, codings: list[bytes], limit: int, *, cut: bool = False) -> bytes:
    """``body`` unpacked (codings in the order applied), at most ``limit`` bytes of it.

    Raises ``zlib.error`` (or ``ValueError`` for an unknown coding) when the
    body cannot be unpacked: a broken file is no file, the caller treats it
    as unreachable. Each step keeps at most ``limit`` bytes: an outer coding
    cut short still unpacks its start. A ``cut`` body (its download stopped
    early) may end before its compressed stream does: what it holds is unpacked.
    """
    for coding in reversed(codings):
        wbits = _WBITS.get(coding)
        if wbits is None:
            raise ValueError(f"cannot unpack Content-Encoding {coding.decode('latin-1')!r}")
        body = _inflate(body, wbits, limit, raw_fallback=coding == b"deflate", cut=cut)
    return body


def _inflate(body: bytes, wbits: int, limit: int, *, raw_fallback: bool, cut: bool) -> bytes:
    """Unpack members one after another (gzip allows several) until ``limit`` bytes."""
    out = bytearray()
    data = body
    while data and len(out) < limit:
        unpacker = zlib.decompressobj(wbits)
        try:
            out += unpacker.decompress(data, limit - len(out))
        except zlib.error:
            if not (raw_fallback and not out):
                raise
            # "deflate" sent as a raw stream, without its zlib header (common).
            unpacker = zlib.decompressobj(-zlib.MAX_WBITS)
            out += unpacker.decompress(data, limit - len(out))
        if len(out) >= limit or not unpacker.eof:
            ended_early = not unpacker.eof and not unpacker.unconsumed_tail and len(out) < limit
            if ended_early and not cut:
                raise zlib.error("compressed body ends early")
            break
        data = unpacker.unused_data
    return bytes(out)


_FRESHNESS_HEADERS = (b"Cache-Control", b"Expires", b"Date", b"Age")
"""The headers :func:`.freshness_lifetime` reads."""


def response_headers(response: Response) -> dict[str, str]:
    """A response's freshness headers as text (only those: one fetch reads them once)."""
    headers = response.headers
    return {
        name.decode("latin-1"): value.decode("latin-1")
        for name in _FRESHNESS_HEADERS
        if (value := headers.get(name)) is not None
    }
