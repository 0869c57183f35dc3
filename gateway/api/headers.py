"""Request headers as the stages read them, and response headers as HTTP can carry them: stages and
caller-derived values never break a response."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request

log = logging.getLogger("cachegate.proxy")
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
HEADER_VALUE = re.compile(r"[\x20-\x7e]*")


def sendable(headers: Mapping[str, Any]) -> dict[str, str]:
    """The response headers HTTP can carry as they are: token names, printable-ASCII values. The one place
    headers are checked before a Response is built: a value that is not (whatever stage set it) would
    fail the response after the provider was paid, or split the header block; it is dropped instead."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        text = value if isinstance(value, str) else str(value)
        if HEADER_NAME.fullmatch(name) and HEADER_VALUE.fullmatch(text):
            out[name] = text
        else:
            log.warning("dropped a response header that HTTP cannot carry: %s", name.encode("ascii", "replace"))
    return out


def request_headers(request: Request) -> dict[str, str]:
    """The request's headers as a dict. Starlette's `Headers.get` walks the whole header list on every
    lookup: an agent CLI sends ~20 headers and a request's stages look up dozens. Names lower-case; a
    header sent twice keeps its first value, as `Headers.get` gives it."""
    found: dict[str, str] = {}
    for name, value in request.headers.raw:
        found.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return found
