"""This replica's vector index of semantic entries, with what purges and expiry need to know about each.

Memory is bounded by entries and bytes, per tenant and in total (gateway/bounded.py): every new scope
or entry costs memory on every replica, so one tenant must neither grow it without limit nor evict
another tenant's entries by filling its own share. Least recently used (added or served) go first.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gateway.bounded import Caps, TenantLRU
from gateway.config.response_cache import ResponseCacheConfig
from gateway.response_cache.keys import Place, place_of
from gateway.semantic.index import VectorIndex

# Bytes an entry costs beyond its vector and key text: its slots in the index's maps, row and recency
# lists, its scope's share (most scopes hold one entry), the expiry map and the LRU (measured ~900 B).
ENTRY_OVERHEAD = 1024


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str  # the entry's storage key (also its id in the index)
    similarity: float


def index_caps(config: ResponseCacheConfig) -> Caps:
    return Caps(
        max_entries=config.max_entries,
        max_bytes=config.index_max_bytes,
        max_entries_per_tenant=min(config.index_max_entries_per_tenant, config.max_entries),
        max_bytes_per_tenant=min(config.index_max_bytes_per_tenant, config.index_max_bytes),
    )


class LocalIndex:
    """Vectors by scope; entry ids are storage keys. Bounded per tenant and in total (least recently used)."""

    def __init__(self, caps: Caps, on_evict: Callable[[str], None] | None = None) -> None:
        self.caps = caps
        self.on_evict = on_evict  # called with the reason of each eviction
        self._index: VectorIndex | None = None  # built at the first vector, which gives the dimension
        self._expires: dict[str, float] = {}
        self._lru: TenantLRU[None] = TenantLRU(caps, self._evicted)

    def __len__(self) -> int:
        return len(self._expires)

    @property
    def bytes(self) -> int:
        """Bytes the entries are accounted for (vectors, keys and per-entry structures)."""
        return self._lru.bytes

    def tenant_usage(self, tenant: str) -> tuple[int, int]:
        """(entries, bytes) of one tenant."""
        return self._lru.tenant_usage(tenant)

    def add(self, key: str, scope: str, vector: np.ndarray, expires: float) -> None:
        place = place_of(key)
        if expires <= time.time() or place is None:
            return
        if self._index is None:  # the caps evict first: the vector index's own bound is only a backstop
            self._index = VectorIndex(int(vector.shape[-1]), max_entries=self.caps.max_entries + 1)
        self._index.add(scope, key, vector)
        self._expires[key] = expires
        size = self._index.row_bytes + sys.getsizeof(key) + sys.getsizeof(scope) + ENTRY_OVERHEAD
        self._lru.put(key, place.tenant, None, size)

    def _evicted(self, key: str, reason: str) -> None:
        self._drop(key)
        if self.on_evict is not None:
            self.on_evict(reason)

    def _drop(self, key: str) -> None:
        if self._index is not None:
            self._index.remove(key)
        self._expires.pop(key, None)

    def remove(self, key: str) -> None:
        self._lru.pop(key)
        self._drop(key)

    def touch(self, key: str) -> None:
        self._lru.get(key)
        if self._index is not None:
            self._index.touch(key)

    def search(self, scope: str, vector: np.ndarray, k: int, threshold: float) -> list[Candidate]:
        """Live entries of `scope` at least `threshold` similar, best first (expired ones are dropped)."""
        if self._index is None:
            return []
        now, found = time.time(), []
        for key, score in self._index.search(scope, vector, k):
            if self._expires.get(key, 0.0) <= now:
                self.remove(key)
            elif score >= threshold:
                found.append(Candidate(key, score))
        return found

    def purge(self, tenant: str | None, namespace: str | None, model: str | None) -> int:
        doomed = [k for k in self._expires if _place(k).matches(tenant, namespace, model)]
        for key in doomed:
            self.remove(key)
        return len(doomed)

    def clear(self) -> None:
        self._index, self._expires = None, {}
        self._lru = TenantLRU(self.caps, self._evicted)


def _place(key: str) -> Place:
    place = place_of(key)
    assert place is not None  # only well-formed keys are added
    return place
