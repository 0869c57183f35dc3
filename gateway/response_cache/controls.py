"""Per-request cache controls sent by the caller as headers.

- `Cache-Control: no-cache` — do not answer from the cache (the fresh answer is still stored);
  `no-store` — neither answer from nor store into the cache; `max-age=N` — only entries at most N
  seconds old may answer (`max-age=0` behaves like no-cache).
- `x-cachegate-cache-namespace: NAME` — a separate cache inside the tenant ([A-Za-z0-9._-], ≤ 64).
- `x-cachegate-cache-ttl: SECONDS` — lifetime of the entry this request stores (capped by config).
- `x-cachegate-cache-semantic: on|off` — opt in to semantic hits above the temperature limit, or opt out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from gateway.errors import bad_request

NAMESPACE_HEADER = "x-cachegate-cache-namespace"
TTL_HEADER = "x-cachegate-cache-ttl"
SEMANTIC_HEADER = "x-cachegate-cache-semantic"
_NAMESPACE = re.compile(r"[A-Za-z0-9._-]{1,64}")


@dataclass(frozen=True, slots=True)
class Controls:
    no_cache: bool = False
    no_store: bool = False
    max_age_s: float | None = None
    namespace: str | None = None
    ttl_s: float | None = None
    semantic: bool | None = None  # None: the policy decides


def _seconds(value: str, header: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise bad_request(f"{header} must be a number of seconds.") from None
    if seconds < 0:
        raise bad_request(f"{header} must not be negative.")
    return seconds


def parse_controls(headers: Mapping[str, str]) -> Controls:
    """The caller's cache controls; malformed values answer 400 rather than being silently ignored."""
    no_cache = no_store = False
    max_age: float | None = None
    for directive in (headers.get("cache-control") or "").lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name == "no-cache":
            no_cache = True
        elif name == "no-store":
            no_store = True
        elif name == "max-age":
            max_age = _seconds(value.strip().strip('"'), "Cache-Control max-age")
    namespace = headers.get(NAMESPACE_HEADER)
    if namespace is not None and not _NAMESPACE.fullmatch(namespace):
        raise bad_request(f"{NAMESPACE_HEADER} must be 1-64 characters of [A-Za-z0-9._-].")
    ttl = headers.get(TTL_HEADER)
    semantic = (headers.get(SEMANTIC_HEADER) or "").strip().lower()
    if semantic not in ("", "on", "off"):
        raise bad_request(f"{SEMANTIC_HEADER} must be 'on' or 'off'.")
    return Controls(
        no_cache=no_cache or max_age == 0,
        no_store=no_store,
        max_age_s=max_age,
        namespace=namespace,
        ttl_s=_seconds(ttl, TTL_HEADER) if ttl is not None else None,
        semantic={"on": True, "off": False}.get(semantic),
    )
