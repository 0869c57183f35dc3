"""The response cache of one gateway process: entries in a backend, semantic vectors in a synced local index.

Lookups never raise for backend trouble: CacheUnavailable propagates to the stage, which counts a skip
and lets the request through. A corrupt entry is deleted and counted, never served.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
from prometheus_client import Counter

from gateway.config.response_cache import ResponseCacheConfig
from gateway.response_cache.entry import CorruptEntry, Entry, decode_entry, encode_entry
from gateway.response_cache.keys import place_of, purge_prefix
from gateway.response_cache.local_index import LocalIndex, index_caps
from gateway.response_cache.metrics import ResponseCacheMetrics
from gateway.response_cache.store import Breaker, CacheUnavailable, EntryBackend, MemoryBackend, Queued, RedisBackend
from gateway.response_cache.sync import IndexSync, RedisIndexSync
from gateway.semantic.embedder import Embedder, EmbeddingOverloaded, EmbeddingTimeout
from gateway.semantic.verifier import verify
from gateway.state import RedisStore, ResilientStore, StateStore
from gateway.state.base import Rider
from gateway.state.request import RequestStore

log = logging.getLogger("cachegate.response_cache")
SEMANTIC_CANDIDATES = 3  # near neighbours checked before a semantic miss (each costs one entry read)
SOFT_CHECK = "words"  # the verifier's word-pairing rule (its reason's first word): a judge overrules it
Judge = Callable[[str, str], Awaitable[bool]]  # (cached prompt, asked prompt) -> serve?
BACKGROUND_EMBED_TIMEOUT_S = 60.0  # an answer whose prompt was not embedded in time is embedded later


@dataclass(frozen=True, slots=True)
class Hit:
    entry: Entry
    similarity: float


class ResponseCache:
    def __init__(
        self,
        backend: EntryBackend,
        index: LocalIndex,
        sync: IndexSync,
        embedder: Embedder,
        metrics: ResponseCacheMetrics,
    ) -> None:
        self.backend, self.index, self.sync, self.embedder, self.metrics = backend, index, sync, embedder, metrics
        self._background: set[asyncio.Task[None]] = set()
        self.embedder_ready = False
        self._warming: asyncio.Task[None] | None = None

    async def aclose(self) -> None:
        """Stop warming and background stores, then the embedder's worker (called at shutdown)."""
        pending = [*self._background, *([self._warming] if self._warming else [])]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await self.embedder.aclose()

    @classmethod
    def create(
        cls,
        store: StateStore,
        config: ResponseCacheConfig,
        metrics: ResponseCacheMetrics,
        index_evictions: Counter | None = None,
    ) -> ResponseCache:
        """Redis when the gateway's state store is Redis (same connection), else in-process memory.
        `index_evictions` (labels cache, reason) counts what the semantic index's memory caps evict."""
        primary = store.primary if isinstance(store, ResilientStore) else store
        on_evict = None if index_evictions is None else lambda r: index_evictions.labels("semantic_index", r).inc()
        index = LocalIndex(index_caps(config), on_evict)
        embedder = Embedder(cpu_share=config.embed_cpu_share)
        if isinstance(primary, RedisStore):
            breaker = Breaker(primary.timeout_s)
            backend = RedisBackend(primary.client, primary.prefix, config.max_entries, breaker)
            sync: IndexSync = RedisIndexSync(backend, index, config.sync_log_max_len, breaker)
            return cls(backend, index, sync, embedder, metrics)
        return cls(MemoryBackend(config.max_entries), index, IndexSync(), embedder, metrics)

    # -- reads ------------------------------------------------------------------------------------------

    async def _read(self, key: str) -> Entry | None:
        return await self._decode(key, await self.backend.get(key))

    async def _decode(self, key: str, raw: bytes | None) -> Entry | None:
        if raw is None:
            return None
        try:
            return decode_entry(raw, key)
        except CorruptEntry:
            self.metrics.errors.labels("corrupt_entry").inc()
            self.index.remove(key)
            await self.backend.delete([key])
            return None

    async def find_exact(self, key: str, max_age_s: float | None) -> Entry | None:
        return await self.exact_entry(key, await self.backend.get(key), max_age_s)

    async def exact_entry(self, key: str, raw: bytes | None, max_age_s: float | None) -> Entry | None:
        """The entry `raw` (the value stored under `key`, read elsewhere) when it may answer."""
        entry = await self._decode(key, raw)
        if entry is None or entry.expired() or (max_age_s is not None and entry.age_s() > max_age_s):
            return None
        return entry

    async def embed(self, text: str, timeout_s: float) -> np.ndarray | None:
        """The text's vector, or None (counted) when the embedder is still loading or does not answer in time.

        The model loads in the background on first use (seconds); requests meanwhile skip the semantic
        tier rather than queue behind the load.
        """
        if not self.embedder_ready:
            self._warm_up()
            self.metrics.skips.labels("semantic", "embedder_loading").inc()
            return None
        started = time.perf_counter()
        try:
            vector = await self.embedder.embed(text, timeout=timeout_s)
        except EmbeddingTimeout:
            self.metrics.skips.labels("semantic", "embedding_timeout").inc()
            return None
        except EmbeddingOverloaded:
            self.metrics.skips.labels("semantic", "embedder_overloaded").inc()
            return None
        self.metrics.embedding_seconds.observe(time.perf_counter() - started)
        return vector

    async def find_semantic(
        self,
        scope: str,
        prompt: str,
        vector: np.ndarray,
        policy: ResponseCacheConfig,
        max_age_s: float | None,
        judge: Judge | None = None,
    ) -> Hit | None:
        """The nearest stored answer that passes the verifier: at or above the similarity threshold, or,
        with a judge, from the judge's threshold up if the judge says yes (one judge call at most)."""
        await self.sync.catch_up()
        floor = min(policy.similarity_threshold, policy.judge.threshold) if judge else policy.similarity_threshold
        candidates = self.index.search(scope, vector, SEMANTIC_CANDIDATES, floor)
        for candidate in candidates:
            entry = await self._read(candidate.key)
            if entry is None or entry.prompt is None or entry.expired():
                self.index.remove(candidate.key)
                continue
            if max_age_s is not None and entry.age_s() > max_age_s:
                continue
            judged = candidate.similarity < policy.similarity_threshold
            if policy.verify and not self._verified(entry.prompt, prompt, judged):
                continue
            if judged:
                assert judge is not None
                if not await judge(entry.prompt, prompt):
                    return None
            self.index.touch(candidate.key)
            return Hit(entry, candidate.similarity)
        return None

    def _verified(self, cached: str, asked: str, judged: bool) -> bool:
        """The verifier's checks; for a judged candidate only its hard ones (identifiers, numbers,
        operators, negation, opposites, entities): the word-pairing rule is what the judge decides better."""
        verdict = verify(cached, asked)
        reason = verdict.reason or ""
        if verdict.ok or (judged and reason.startswith(SOFT_CHECK)):
            return True
        self.metrics.rejected(reason)
        return False

    def _warm_up(self) -> None:
        if self._warming is not None:
            return

        async def run() -> None:
            try:
                await self.embedder.warmup()
            except Exception:  # no model: the semantic tier stays off, the exact tier works
                log.exception("the response cache embedder failed to load")
                return
            self.embedder_ready = True

        self._warming = asyncio.get_running_loop().create_task(run())

    # -- writes -----------------------------------------------------------------------------------------

    async def put(self, entry: Entry, also: Queued | None = None) -> bool:
        """Store the entry (False: it expired already; `also`: EntryBackend.put)."""
        ttl = entry.expires - time.time()
        if ttl <= 0:
            return False
        stored = entry if self.backend.shared or entry.vector is None else replace(entry, vector=None)
        self._evicted(await self.backend.put(entry.key, encode_entry(stored), ttl, also))
        if entry.vector is not None and entry.scope is not None:
            self.index.add(entry.key, entry.scope, entry.vector, entry.expires)
            await self.sync.publish_add(entry.key, entry.scope, entry.vector, entry.expires)
        return True

    def ride_put(
        self, entry: Entry, state: RequestStore, also: Queued | None = None, stored: Callable[[], None] | None = None
    ) -> bool:
        """Store an exact entry (no vector) in the request's next state round trip, when that trip goes to the
        cache's own Redis client (gateway/state/request.py `ride`): one round trip for both, instead of one
        each. False when it cannot ride (then `put`). `stored` runs once the entry (and `also`) are in."""
        backend = self.backend
        if not isinstance(backend, RedisBackend) or entry.vector is not None or backend.breaker.down:
            return False
        ttl = entry.expires - time.time()
        if ttl <= 0 or not state.carries(backend.client):
            return False
        commands = [*backend.write_commands(entry.key, encode_entry(entry), ttl), *(also or ())]
        landed = partial(self._landed, backend, stored=stored)
        state.ride(Rider(backend.client, commands, landed, backend.breaker.alone(backend.client, commands)))
        return True

    def _landed(
        self, backend: RedisBackend, replies: list[Any] | BaseException, stored: Callable[[], None] | None
    ) -> None:
        if isinstance(replies, BaseException) or any(isinstance(reply, Exception) for reply in replies):
            backend.breaker.trip()
            self.metrics.skips.labels("store", "backend_unavailable").inc()
            return
        if stored is not None:
            stored()
        size = replies[2]
        if isinstance(size, int) and size > backend.max_entries:  # evicted off the response path
            self._in_background(self._trim(backend, size))

    async def _trim(self, backend: RedisBackend, size: int) -> None:
        try:
            self._evicted(await backend.breaker.call(lambda: backend.trim(size)))
        except CacheUnavailable:  # the next store trims again
            return

    def _evicted(self, keys: list[str]) -> None:
        """Entries the size bound evicted: out of the local index too, counted."""
        for key in keys:
            self.index.remove(key)
        self.metrics.evictions.inc(len(keys))

    def put_later(self, entry: Entry, prompt: str) -> None:
        """Store a semantic entry once its prompt is embedded, off the response path."""

        async def run() -> None:
            try:
                vector = await self.embedder.embed(prompt, timeout=BACKGROUND_EMBED_TIMEOUT_S)
                await self.put(replace(entry, vector=vector))
            except Exception:  # a background store that fails only costs a future miss
                self.metrics.errors.labels("background_store").inc()

        self._in_background(run())

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def purge(self, tenant: str | None, namespace: str | None, model: str | None) -> int:
        """Delete the selected entries on every replica; returns how many entries were deleted."""
        keys = [
            k
            for k in await self.backend.keys(purge_prefix(tenant, namespace))
            if (place := place_of(k)) is not None and place.matches(tenant, namespace, model)
        ]
        deleted = await self.backend.delete(keys)
        self.index.purge(tenant, namespace, model)
        await self.sync.publish_purge(tenant, namespace, model)
        return deleted
