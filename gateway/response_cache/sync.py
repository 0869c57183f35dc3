"""Keeping every replica's in-process vector index equal to the semantic entries shared in Redis.

Each write of a semantic entry (and each purge) appends a record to a Redis stream, numbered by a
sequence counter in the same atomic script. Before a semantic lookup a replica reads the records after
the last one it applied — one round trip that returns nothing when nothing changed — and applies them.
A replica that has applied nothing yet, or finds a hole in the numbering (the stream is trimmed at
`max_len` records), reloads its index from the entries themselves (each shared entry carries its
vector). Applying a record twice is harmless, so a record the replica wrote itself costs nothing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import numpy as np
import redis.asyncio as aioredis

from gateway.response_cache.entry import CorruptEntry, decode_entry
from gateway.response_cache.keys import SEMANTIC_TIER, tier_of
from gateway.response_cache.local_index import LocalIndex
from gateway.response_cache.store import KEY_ROOT, META_ROOT, Breaker, RedisBackend

log = logging.getLogger("cachegate.response_cache")
READ_BATCH = 1000
# INCR and XADD in one script, so sequence numbers follow stream order with no gaps between writers.
APPEND = """
local seq = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'seq', seq, unpack(ARGV, 2))
return seq
"""


class IndexSync:
    """No other replica to follow: the embedded default."""

    async def publish_add(self, key: str, scope: str, vector: np.ndarray, expires: float) -> None:
        return None

    async def publish_purge(self, tenant: str | None, namespace: str | None, model: str | None) -> None:
        return None

    async def catch_up(self) -> None:
        return None


class RedisIndexSync(IndexSync):
    def __init__(self, backend: RedisBackend, index: LocalIndex, max_len: int, breaker: Breaker) -> None:
        self.backend, self.index, self.max_len, self.breaker = backend, index, max_len, breaker
        client: aioredis.Redis = backend.client
        self.client = client
        # One hash tag: the append script takes both keys (one slot in a Redis Cluster).
        self.stream_key = f"{backend.prefix}{META_ROOT}{{sync}}:log"
        self.seq_key = f"{backend.prefix}{META_ROOT}{{sync}}:seq"
        self._append = client.register_script(APPEND)
        self._last_id: str | None = None  # None: nothing applied yet, reload first
        self._last_seq = 0
        self._lock = asyncio.Lock()

    async def _publish(self, fields: dict[str, bytes | str]) -> None:
        args: list[Any] = [self.max_len]
        for name, value in fields.items():
            args += [name, value]
        await self.breaker.call(lambda: self._append(keys=[self.stream_key, self.seq_key], args=args))

    async def publish_add(self, key: str, scope: str, vector: np.ndarray, expires: float) -> None:
        vec = np.asarray(vector, dtype="<f4").tobytes()
        await self._publish({"op": "add", "key": key, "scope": scope, "vec": vec, "exp": repr(expires)})

    async def publish_purge(self, tenant: str | None, namespace: str | None, model: str | None) -> None:
        # An empty field selects everything: tenant, namespace and model names are never empty.
        await self._publish({"op": "purge", "tenant": tenant or "", "namespace": namespace or "", "model": model or ""})

    async def catch_up(self) -> None:
        """Apply what other replicas wrote since the last call; a caller that finds a catch-up already
        running goes on with the index as it is rather than wait."""
        if self._lock.locked():
            return
        async with self._lock:
            if self._last_id is None:
                await self._reload()
            while await self._apply_next_batch():
                pass

    async def _apply_next_batch(self) -> bool:
        start = f"({self._last_id}"
        records: Any = await self.breaker.call(lambda: self.client.xrange(self.stream_key, start, "+", READ_BATCH))
        for record_id, fields in records:
            seq = int(fields[b"seq"])
            if seq > self._last_seq + 1:  # records were trimmed before this replica read them
                await self._reload()
                return True
            self._apply(fields)
            self._last_id, self._last_seq = record_id.decode(), seq
        return len(records) == READ_BATCH

    def _apply(self, fields: dict[bytes, bytes]) -> None:
        if fields[b"op"] == b"add":
            vector = np.frombuffer(fields[b"vec"], dtype="<f4").astype(np.float32)
            self.index.add(fields[b"key"].decode(), fields[b"scope"].decode(), vector, float(fields[b"exp"]))
        elif fields[b"op"] == b"purge":
            selected = (
                fields[b"tenant"].decode() or None,
                fields[b"namespace"].decode() or None,
                fields[b"model"].decode() or None,
            )
            self.index.purge(*selected)

    async def _reload(self) -> None:
        """Rebuild the index from the shared entries, starting the log after the newest record seen first."""
        newest: Any = await self.breaker.call(lambda: self.client.xrevrange(self.stream_key, "+", "-", 1))
        self._last_id, self._last_seq = "0-0", 0
        if newest:
            self._last_id, self._last_seq = newest[0][0].decode(), int(newest[0][1][b"seq"])
        keys = [k for k in await self.backend.keys(KEY_ROOT) if tier_of(k) == SEMANTIC_TIER]
        self.index.clear()
        for key, raw in zip(keys, await self.backend.get_many(keys), strict=True):
            if raw is None:
                continue
            try:
                entry = decode_entry(raw, key)
            except CorruptEntry:
                continue  # dropped when a lookup reads it
            if entry.vector is not None and entry.scope is not None:
                self.index.add(key, entry.scope, entry.vector, entry.expires)
        log.info("response cache index reloaded: %d semantic entries", len(self.index))
