"""In-process vector index for the semantic cache: entries grouped by scope, cosine search inside a scope.

A scope (tenant, model, prompt-settings hash, conversation hash) is usually small, so a scope starts
as one contiguous bfloat16 matrix searched exactly by brute force (one matmul). A scope that grows past
``ivf_min_size`` entries becomes an IVF index so that a lookup over 100,000 entries stays within ~2x
of one over 1,000 (brute force over 100k is ~150x):

- cells from spherical k-means, computed in a 64-dimensional projection (top principal directions of
  the scope's vectors), so scoring every centroid reads a small, cache-resident matrix;
- a search scans only the ``nprobe`` cells nearest to the query, with the full vectors, so the scores
  it returns are exact cosines. A cold 384-float row costs ~4x a cached one (memory, not arithmetic,
  bounds this), which is why there are many small cells (~sqrt(32 * nprobe * size)).

IVF can miss a neighbour that sits in an unprobed cell; for a cache that only costs a miss, and the
near-duplicates a cache serves (cosine >= ~0.9) share the query's cell (recall@1 ~1.0 in the bench).
The cells are rebuilt each time the scope doubles: amortised O(1) per add, but that one add stalls
(measured under load average ~6 on 2 cores: 0.2 s at 4k entries, 1 s at 16k, 4.4 s at 65k), so a
caller that lets one scope grow that large should add from a worker thread.

Rows live in matrices with amortised doubling from a single row (most scopes hold one or two entries:
a 16-row start made every new scope cost ~25 KB; now ~2.5 KB); removal swaps the last row into the
hole (O(1)); the total size is bounded: adding past ``max_entries`` evicts the least recently used
entry (``touch`` marks an entry used, e.g. when the stage serves it). Not thread-safe: use it from one
thread. Rows are stored as bfloat16 (the top half of each float32, kept as uint16; scored in float32):
half the bytes of float32 like float16, but widening a row back is a shift, where numpy's float16
conversion took ~0.5 ms per 1,000 rows on every brute-force search (~2 ms for a 4,096-entry scope, on the
event loop); a returned cosine is exact to ~1e-3, far inside the steps between thresholds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

DEFAULT_MAX_ENTRIES = 200_000
DEFAULT_IVF_MIN_SIZE = 4096
DEFAULT_NPROBE = 2
DEFAULT_REDUCED_DIM = 64
_KMEANS_ITERATIONS = 6
_KMEANS_SAMPLE_PER_CELL = 16
_MIN_CELL_SIZE = 16
STORAGE_DTYPE = np.uint16  # bfloat16 bits


def to_storage(vectors: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits, rounded to nearest even."""
    bits = np.asarray(vectors, dtype=np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(STORAGE_DTYPE)


def widen(rows: np.ndarray) -> np.ndarray:
    """bfloat16 bits -> float32 (exact)."""
    wide = rows.astype(np.uint32)
    wide <<= 16
    return wide.view(np.float32)


Match = tuple[str, float]


class _Block:
    """A growable matrix of rows plus the entry id of each row."""

    def __init__(self, dim: int, capacity: int = 1) -> None:
        self.vectors = np.empty((capacity, dim), dtype=STORAGE_DTYPE)
        self.ids: list[str] = []

    @property
    def size(self) -> int:
        return len(self.ids)

    def append(self, entry_id: str, vector: np.ndarray) -> int:
        if self.size == len(self.vectors):
            self._resize(2 * len(self.vectors))
        self.vectors[self.size] = to_storage(vector)
        self.ids.append(entry_id)
        return self.size - 1

    def swap_delete(self, row: int) -> str | None:
        """Remove ``row`` by moving the last row into it; return the id of the moved entry, if any."""
        last = self.size - 1
        moved = None
        if row != last:
            self.vectors[row] = self.vectors[last]
            moved = self.ids[row] = self.ids[last]
        self.ids.pop()
        if 4 * self.size < len(self.vectors) and len(self.vectors) > 16:  # give memory back
            self._resize(2 * max(self.size, 8))
        return moved

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of each row with a unit float32 query (rows widened to float32 first: BLAS speed)."""
        return widen(self.vectors[: self.size]) @ query

    def _resize(self, capacity: int) -> None:
        grown = np.empty((capacity, self.vectors.shape[1]), dtype=STORAGE_DTYPE)
        grown[: self.size] = self.vectors[: self.size]
        self.vectors = grown


@dataclass
class _Partition:
    """The IVF part of a large scope: projection basis (dim x reduced) and unit centroids in that space."""

    basis: np.ndarray
    centroids: np.ndarray

    def cell_scores(self, vector: np.ndarray) -> np.ndarray:
        return self.centroids @ (vector @ self.basis)

    def cell(self, vector: np.ndarray) -> int:
        return int(np.argmax(self.cell_scores(vector)))


@dataclass(slots=True)
class _Scope:
    blocks: list[_Block]
    partition: _Partition | None = None  # None: one block searched exactly by brute force
    size: int = 0
    trained_size: int = 0


@dataclass(frozen=True, slots=True)
class _Location:
    scope: Hashable
    block: int
    row: int


def _normalise(vector: np.ndarray) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.sqrt(vector @ vector))
    return vector / norm if norm > 0 else vector


def spherical_kmeans(vectors: np.ndarray, cells: int, seed: int = 0) -> np.ndarray:
    """Unit-norm centroids of ``cells`` clusters by cosine (k-means on a sample of the rows)."""
    rng = np.random.default_rng(seed)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sample_size = min(len(vectors), cells * _KMEANS_SAMPLE_PER_CELL)
    sample = vectors[rng.choice(len(vectors), sample_size, replace=False)]
    centroids = sample[rng.choice(sample_size, cells, replace=False)].copy()
    for _ in range(_KMEANS_ITERATIONS):
        assignment = np.argmax(sample @ centroids.T, axis=1)
        order = np.argsort(assignment, kind="stable")
        used, starts = np.unique(assignment[order], return_index=True)
        sums = np.zeros_like(centroids)
        sums[used] = np.add.reduceat(sample[order], starts)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        empty = norms[:, 0] == 0
        # An empty cell restarts at a random point rather than staying dead.
        sums[empty] = sample[rng.choice(sample_size, int(empty.sum()))]
        norms[empty] = 1.0
        centroids = (sums / norms).astype(np.float32)
    return centroids


def principal_basis(vectors: np.ndarray, dim: int, seed: int = 0) -> np.ndarray:
    """The top ``dim`` eigenvectors of the uncentred Gram matrix (so dot products are kept), as columns."""
    rng = np.random.default_rng(seed)
    sample = vectors[rng.choice(len(vectors), min(len(vectors), 8192), replace=False)]
    _, eigenvectors = np.linalg.eigh(sample.T @ sample)  # ascending eigenvalues
    return np.ascontiguousarray(eigenvectors[:, ::-1][:, :dim], dtype=np.float32)


class VectorIndex:
    """Cosine nearest-neighbour search over unit vectors, partitioned by scope key."""

    def __init__(
        self,
        dim: int = 384,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        ivf_min_size: int = DEFAULT_IVF_MIN_SIZE,
        nprobe: int = DEFAULT_NPROBE,
        reduced_dim: int = DEFAULT_REDUCED_DIM,
    ) -> None:
        self.dim = dim
        self.max_entries = max_entries
        self.ivf_min_size = ivf_min_size
        self.nprobe = nprobe
        self.reduced_dim = min(reduced_dim, dim)
        self._scopes: dict[Hashable, _Scope] = {}
        self._where: dict[str, _Location] = {}
        self._recency: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._where)

    @property
    def row_bytes(self) -> int:
        """Bytes of one stored vector."""
        return self.dim * np.dtype(STORAGE_DTYPE).itemsize

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._where

    def scope_size(self, scope: Hashable) -> int:
        found = self._scopes.get(scope)
        return found.size if found else 0

    def add(self, scope: Hashable, entry_id: str, vector: np.ndarray) -> list[str]:
        """Insert (or replace) an entry; returns the ids evicted to stay within ``max_entries``."""
        vector = _normalise(vector)
        if vector.shape != (self.dim,):
            raise ValueError(f"expected a vector of {self.dim} floats, got {vector.shape}")
        self.remove(entry_id)
        target = self._scopes.setdefault(scope, _Scope(blocks=[_Block(self.dim)]))
        block = 0 if target.partition is None else target.partition.cell(vector)
        self._where[entry_id] = _Location(scope, block, target.blocks[block].append(entry_id, vector))
        self._recency[entry_id] = None
        target.size += 1
        if target.size >= self.ivf_min_size and target.size >= 2 * target.trained_size:
            self._partition(scope, target)
        evicted: list[str] = []
        while len(self._where) > self.max_entries:
            oldest = next(iter(self._recency))
            self.remove(oldest)
            evicted.append(oldest)
        return evicted

    def touch(self, entry_id: str) -> None:
        """Mark an entry as just used so eviction takes it last."""
        if entry_id in self._recency:
            self._recency.move_to_end(entry_id)

    def remove(self, entry_id: str) -> bool:
        location = self._where.pop(entry_id, None)
        if location is None:
            return False
        del self._recency[entry_id]
        target = self._scopes[location.scope]
        moved = target.blocks[location.block].swap_delete(location.row)
        if moved is not None:
            self._where[moved] = location
        target.size -= 1
        if target.size == 0:
            del self._scopes[location.scope]
        return True

    def search(self, scope: Hashable, vector: np.ndarray, k: int = 1) -> list[Match]:
        """The ``k`` entries of ``scope`` most similar to ``vector``, best first, as (id, cosine)."""
        target = self._scopes.get(scope)
        if target is None or k <= 0:
            return []
        query = _normalise(vector)
        if target.partition is None:
            block = target.blocks[0]
            return _best(block, block.scores(query), k)
        cell_scores = target.partition.cell_scores(query)
        probe = min(self.nprobe, len(cell_scores))
        found: list[Match] = []
        for cell in np.argpartition(-cell_scores, probe - 1)[:probe]:
            block = target.blocks[cell]
            if block.size:
                found.extend(_best(block, block.scores(query), k))
        found.sort(key=lambda match: match[1], reverse=True)
        return found[:k]

    def _cell_count(self, size: int) -> int:
        # A search scores every centroid (64 floats each, cache-resident) and then ~nprobe * size / cells
        # full rows (384 floats from memory, ~30x the cost of a centroid): sqrt(32 * nprobe * size)
        # cells minimise the sum (measured: 16 gave 1.8-2.0x the 1k-entry latency, 32 gave ~1.6x).
        return max(1, min(size // _MIN_CELL_SIZE, int(np.sqrt(32 * self.nprobe * size))))

    def _partition(self, scope: Hashable, target: _Scope) -> None:
        """(Re)build the scope's cells; runs each time the scope doubles, so its cost is amortised."""
        # One BLAS thread: on a small shared box, threaded OpenBLAS spinning against torch and other
        # processes made this 100x slower (eigh of 384x384: 7 s instead of 0.05 s).
        with threadpool_limits(limits=1, user_api="blas"):
            self._rebuild(scope, target)

    def _rebuild(self, scope: Hashable, target: _Scope) -> None:
        ids = [i for b in target.blocks for i in b.ids]
        vectors = widen(np.concatenate([b.vectors[: b.size] for b in target.blocks]))
        basis = principal_basis(vectors, self.reduced_dim)
        reduced = vectors @ basis
        partition = _Partition(basis, spherical_kmeans(reduced, self._cell_count(len(ids))))
        assignment = np.argmax(reduced @ partition.centroids.T, axis=1)
        blocks = [_Block(self.dim) for _ in range(len(partition.centroids))]
        for entry_id, vector, cell in zip(ids, vectors, assignment, strict=True):
            self._where[entry_id] = _Location(scope, int(cell), blocks[cell].append(entry_id, vector))
        target.blocks, target.partition, target.trained_size = blocks, partition, len(ids)


def _best(block: _Block, scores: np.ndarray, k: int) -> list[Match]:
    """The k best (id, score) of a block, best first."""
    if k == 1:
        row = int(scores.argmax())
        return [(block.ids[row], float(scores[row]))]
    top = np.argpartition(-scores, min(k, len(scores)) - 1)[:k]
    top = top[np.argsort(-scores[top])]
    return [(block.ids[r], float(scores[r])) for r in top]
