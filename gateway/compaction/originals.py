"""Originals of compacted tool results and write-ahead history dumps, kept per tenant in the store.

Keys carry the tenant, so a handle only resolves for the tenant that produced it.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.state import StateStore


def original_key(tenant: str, handle: str) -> str:
    return f"cg:cmp:orig:{tenant}:{handle}"


class Originals:
    def __init__(self, store: StateStore, ttl_s: float | None = None) -> None:
        self.store = store
        self.ttl_s = ttl_s

    async def put(self, tenant: str, handle: str, kind: str, content: Any, **facts: Any) -> None:
        payload = orjson.dumps({"handle": handle, "kind": kind, **facts, "content": content})
        await self.store.set(original_key(tenant, handle), payload, self.ttl_s, only_new=True)

    async def get(self, tenant: str, handle: str) -> dict[str, Any] | None:
        raw = await self.store.get(original_key(tenant, handle))
        if raw is None:
            return None
        found: dict[str, Any] = orjson.loads(raw)
        return found
