"""Once per event: the first replica to claim an event's key in the shared state store sends it; the
others (and this one, later) skip it until the key expires. A per-replica memory of recent claims saves
the store round trip for events that repeat on every request (a budget past its soft limit)."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict

import orjson

from gateway.state import StateStore

LOCAL_CLAIMS = 4096  # recent keys this replica remembers


def store_key(parts: tuple[str, ...]) -> str:
    """The tenant first (the store's namespacing; gateway-wide events: none), then a hash: caller-chosen
    parts never reach a key raw."""
    digest = hashlib.sha256(orjson.dumps(parts)).hexdigest()[:32]
    return f"{parts[1]}:alerts:{digest}" if parts[1] else f"alerts:{digest}"


class Dedupe:
    def __init__(self, store: StateStore) -> None:
        self.store = store
        self._claimed: OrderedDict[str, float] = OrderedDict()  # key -> when it expires

    def recent(self, parts: tuple[str, ...]) -> bool:
        """Whether this replica claimed `parts` (or saw them claimed) within their TTL: no need to queue it."""
        expires = self._claimed.get(store_key(parts))
        return expires is not None and expires > time.monotonic()

    async def claim(self, parts: tuple[str, ...], ttl_s: float) -> bool:
        """True for the first claim of `parts` within `ttl_s`, on any replica sharing the store. A store
        that fails lets the alert go (a duplicate is better than a missed alert)."""
        if self.recent(parts):
            return False
        key, now = store_key(parts), time.monotonic()
        self._claimed[key] = now + ttl_s
        self._claimed.move_to_end(key)
        while len(self._claimed) > LOCAL_CLAIMS:
            self._claimed.popitem(last=False)
        try:
            return await self.store.set(key, b"1", ttl_s, only_new=True)
        except Exception:
            return True
