"""This replica's vector index of semantic entries, with what purges and expiry need to know about each."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from gateway.response_cache.keys import Place, place_of
from gateway.semantic.index import VectorIndex


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str  # the entry's storage key (also its id in the index)
    similarity: float


class LocalIndex:
    """Vectors by scope; entry ids are storage keys. Size-bounded by the vector index (least recently used)."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._index: VectorIndex | None = None  # built at the first vector, which gives the dimension
        self._expires: dict[str, float] = {}

    def __len__(self) -> int:
        return len(self._expires)

    def add(self, key: str, scope: str, vector: np.ndarray, expires: float) -> None:
        if expires <= time.time() or place_of(key) is None:
            return
        if self._index is None:
            self._index = VectorIndex(int(vector.shape[-1]), max_entries=self.max_entries)
        for evicted in self._index.add(scope, key, vector):
            self._expires.pop(evicted, None)
        self._expires[key] = expires

    def remove(self, key: str) -> None:
        if self._index is not None and self._index.remove(key):
            self._expires.pop(key, None)

    def touch(self, key: str) -> None:
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


def _place(key: str) -> Place:
    place = place_of(key)
    assert place is not None  # only well-formed keys are added
    return place
