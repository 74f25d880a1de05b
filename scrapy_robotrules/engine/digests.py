"""The SHA-256 of a robots.txt body, in hex: the one name a file goes by.

A shared store archives bodies under it, the rules database records it in
each entry, the audit trail and the signals name files by it, and a site
policy's own robots.txt is shown by it. It sits below the rules, the
stores, the database and the operator's tools, so that each takes it from
the same place.
"""

from __future__ import annotations

import hashlib

__all__ = ["sha256_of"]


def sha256_of(body: bytes) -> str:
    """The name of the file ``body``: its SHA-256, in lower-case hex."""
    return hashlib.sha256(body).hexdigest()
