"""The meta tags of a response's head, read once for the page and usage middlewares.

Both middlewares need the ``(name, content)`` meta pairs of each HTML
response's head (robots rules; ``tdm-reservation`` and ``tdm-policy``).
They are read once per response, from its first ``ROBOTRULES_PAGE_MAX_HTML``
bytes, decoded by what the response says of itself (a byte order mark, the
``Content-Type`` charset, a charset the head declares, else UTF-8), without
decoding the whole body as ``response.text`` would.

A body whose first bytes hold no ``<meta`` (in any case) and no NUL byte
has no meta tag in any encoding a browser reads (every one of the WHATWG
Encoding Standard's is ASCII-compatible but UTF-16, whose text of ASCII
characters is half NUL bytes): such a response, most of them, costs one
search and no decoding. (Choice: UTF-7 and EBCDIC pages, which browsers do
not read either, are taken for what their bytes say.)

SPEC: none (page-level rules and usage preferences go beyond robots.txt).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scrapy.http import HtmlResponse
from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom

from ..engine.page.html import head_metas

if TYPE_CHECKING:
    from scrapy.http import Response

__all__ = ["response_metas"]

_LAST: list[tuple[Response, int, tuple[tuple[str, str], ...]] | None] = [None]
"""The last response read, the limit, and its meta pairs: the second middleware asks again."""


_META = re.compile(rb"<[Mm][Ee][Tt][Aa]")
"""Where a meta tag may start, in an ASCII-compatible text."""


def response_metas(response: Response, limit: int) -> tuple[tuple[str, str], ...]:
    """The meta pairs of the head of ``response`` if it is HTML, in document order; else none."""
    if not isinstance(response, HtmlResponse):
        return ()
    last = _LAST[0]
    if last is not None and last[0] is response and last[1] == limit:
        return last[2]
    body = response.body
    if _META.search(body, 0, limit) is None and body.find(b"\x00", 0, limit) < 0:
        metas: tuple[tuple[str, str], ...] = ()
    else:
        head, encoding = _head(response, limit)
        metas = tuple(head_metas(head, encoding, limit))
    _LAST[0] = (response, limit, metas)
    return metas


def _head(response: HtmlResponse, limit: int) -> tuple[bytes, str]:
    """The first bytes of the body and their encoding."""
    head = response.body[:limit]
    bom_encoding, bom = read_bom(head)
    if bom_encoding is not None and bom is not None:
        return head[len(bom) :], bom_encoding
    content_type = response.headers.get(b"Content-Type") or b""
    encoding = http_content_type_encoding(content_type.decode("latin-1"))
    return head, encoding or html_body_declared_encoding(head) or "utf-8"
