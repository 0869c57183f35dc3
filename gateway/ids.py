"""Caller-chosen ids (session ids from a header or body field) as safe internal keys.

A caller id ends up in response headers, store keys, metric-free logs and the dashboard, so it must be
plain, short ASCII whatever the caller sent. Readable ids (the usual uuid-ish ones) are kept as they
are; anything else becomes ``sha256:<hex digest of its UTF-8 bytes>``. The mapping is injective: kept
ids never contain ``:``, digests always do, and two different inputs never share a digest, so no cut or
replacement ever merges two callers' sessions.
"""

from __future__ import annotations

import hashlib
import re

MAX_KEPT_ID = 200
HASHED_PREFIX = "sha256:"
# Letters, digits and a few punctuation marks: safe in a header, a Redis key and a log line, and free of
# ':' (the separator in tenant-scoped keys) and whitespace (stripped by HTTP).
_KEPT = re.compile(rf"[A-Za-z0-9._~@+=/-]{{1,{MAX_KEPT_ID}}}")


def safe_id(value: str) -> str:
    """The caller id as a key: the id itself when short and plain, else a prefixed SHA-256 digest."""
    if _KEPT.fullmatch(value):
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return HASHED_PREFIX + digest
