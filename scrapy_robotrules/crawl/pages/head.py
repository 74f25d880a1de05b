"""The meta tags of a response's head, read once for the page and usage middlewares.

Both middlewares need the ``(name, content)`` meta pairs of each HTML
response's head (robots rules; ``tdm-reservation`` and ``tdm-policy``).
They are read once per response, from its first ``ROBOTRULES_PAGE_MAX_HTML``
bytes, decoded by what the response says of itself (a byte order mark, the
``Content-Type`` charset, a charset the head declares, else UTF-8), without
decoding the whole body as ``response.text`` would (:func:`response_html`,
which the page middleware also reads ``rel="nofollow"`` links in). A charset
naming a codec that is no text encoding (``hex``, ``base64``, ``idna``) is
passed over as browsers pass over a label they do not know: the next source
decides. Read with them: whether
the response says anything either middleware reads (:func:`says_nothing`),
so that for most responses each middleware only asks that.

A body whose first bytes hold no ``<meta`` (in any case) and no NUL byte
has no meta tag in any encoding a browser reads (every one of the WHATWG
Encoding Standard's is ASCII-compatible but UTF-16, whose text of ASCII
characters is half NUL bytes): such a response, most of them, costs two
searches and no decoding. (Choice: UTF-7 and EBCDIC pages, which browsers do
not read either, are taken for what their bytes say.) The search for
``<meta`` is in the lower-cased bytes: a regular expression matching each
case tries a match at every ``<`` and costs more than twice as much.

SPEC: none (page-level rules and usage preferences go beyond robots.txt).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.http import Headers, HtmlResponse
from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom

from scrapy_robotrules.engine.page.html import decode_html, head_metas, text_encoding

if TYPE_CHECKING:
    from scrapy.http import Response

__all__ = ["response_html", "response_metas", "says_nothing"]

_SAID = frozenset(
    Headers().normkey(name)
    for name in (
        "X-Robots-Tag",
        "Content-Usage",
        "Content-Signal",
        "Content-Signals",
        "tdm-reservation",
        "tdm-policy",
    )
)
"""The headers either middleware reads, as Scrapy's ``Headers`` keys them."""

_Read = tuple["Response", int, tuple[tuple[str, str], ...], bool]
_LAST: list[_Read | None] = [None]
"""The last response read, the limit, its meta pairs, and whether it says nothing (see
:func:`says_nothing`): the second middleware asks again."""


def response_metas(response: Response, limit: int) -> tuple[tuple[str, str], ...]:
    """The meta pairs of the head of ``response`` if it is HTML, in document order; else none."""
    last = _LAST[0]
    if last is None or last[0] is not response or last[1] != limit:
        says_nothing(response, limit)
        last = _LAST[0]
        assert last is not None
    return last[2]


def says_nothing(response: Response, limit: int) -> bool:
    """Whether ``response`` has none of the headers either middleware reads, nor a meta tag.

    Most responses: neither middleware has anything to read in them.
    """
    last = _LAST[0]
    if last is not None and last[0] is response and last[1] == limit:
        return last[3]
    metas: tuple[tuple[str, str], ...] = ()
    if isinstance(response, HtmlResponse):
        head = response.body[:limit]  # the body itself, when shorter than the limit
        if head.lower().find(b"<meta") >= 0 or 0 in head:
            text = response_html(response, limit)[0]
            metas = tuple(head_metas(text, limit=limit, max_tags=None))  # every one in the limit
    # Scrapy's Headers is a dict of normalised names: read as one, without normalising.
    quiet = not metas and dict.keys(response.headers).isdisjoint(_SAID)
    _LAST[0] = (response, limit, metas, quiet)
    return quiet


def response_html(response: HtmlResponse, limit: int) -> tuple[str, str]:
    """The first ``limit`` bytes of the body as text, and the encoding they were read in."""
    head = response.body[:limit]
    bom_encoding, bom = read_bom(head)
    if bom_encoding is not None and bom is not None:
        return decode_html(head[len(bom) :], bom_encoding), bom_encoding
    content_type = response.headers.get(b"Content-Type") or b""
    encoding = (
        text_encoding(http_content_type_encoding(content_type.decode("latin-1")))
        or text_encoding(html_body_declared_encoding(head))
        or "utf-8"
    )
    return decode_html(head, encoding), encoding
