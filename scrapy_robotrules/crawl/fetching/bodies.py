"""A compressed robots.txt, unpacked only as far as it is read (RFC 9309 §2.5: the first 500 KiB).

Scrapy's ``HttpCompressionMiddleware`` unpacks a whole body, and refuses one
that grows past ``download_maxsize``: a gzip bomb robots.txt would then be
refused for ever, and its site never crawled. So a robots.txt response
(marked by :data:`ROBOTS_META`) has its ``Content-Encoding`` hidden from that
middleware by :class:`RobotsBodyMiddleware`, which sits just before it on
the way back (priority 595; HttpCompressionMiddleware is at 590), and
:func:`decode_body` unpacks it here, stopping one byte past
``ROBOTRULES_MAX_SIZE``: memory stays bounded, and the rules at the top of
the file apply. robots.txt requests accept gzip and deflate only (zlib can
stop early); a body in another coding is left to Scrapy, as before.

SPEC 1 (the size limit) and 8 (a body that cannot be unpacked is unreachable).
"""

from __future__ import annotations

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
    "RobotsBodyMiddleware",
    "decode_body",
    "hidden_encoding",
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
        if not request.meta.get(ROBOTS_META):
            return response
        codings = _codings(response.headers.getlist(b"Content-Encoding"))
        if not codings or any(coding not in _WBITS for coding in codings):
            return response  # none, or one zlib cannot stop early in: Scrapy's
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


def decode_body(body: bytes, codings: list[bytes], limit: int) -> bytes:
    """``body`` unpacked (codings in the order applied), at most ``limit`` bytes of it.

    Raises ``zlib.error`` (or ``ValueError`` for an unknown coding) when the
    body cannot be unpacked: a broken file is no file, the caller treats it
    as unreachable. Each step keeps at most ``limit`` bytes: an outer coding
    cut short still unpacks its start.
    """
    for coding in reversed(codings):
        wbits = _WBITS.get(coding)
        if wbits is None:
            raise ValueError(f"cannot unpack Content-Encoding {coding.decode('latin-1')!r}")
        body = _inflate(body, wbits, limit, raw_fallback=coding == b"deflate")
    return body


def _inflate(body: bytes, wbits: int, limit: int, *, raw_fallback: bool) -> bytes:
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
            if not unpacker.eof and not unpacker.unconsumed_tail and len(out) < limit:
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
