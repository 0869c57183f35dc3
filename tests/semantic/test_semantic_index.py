"""VectorIndex: add/search/remove, scopes, LRU eviction, and the IVF path for large scopes."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.semantic.index import VectorIndex

# Rows are stored as bfloat16: a cosine is exact to ~1e-3 (docs/design/semantic-index.md).
COSINE_ERROR = 2e-3


def unit(rng: np.random.Generator, n: int, dim: int = 384) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def filled(vectors: np.ndarray) -> VectorIndex:
    """An index with each vector as entry e<i> of scope "s"."""
    index = VectorIndex()
    for i, v in enumerate(vectors):
        index.add("s", f"e{i}", v)
    return index


def test_search_finds_the_nearest_with_its_cosine() -> None:
    rng = np.random.default_rng(1)
    vectors = unit(rng, 50)
    index = filled(vectors)
    [(entry, score)] = index.search("s", vectors[7])
    assert entry == "e7"
    assert score == pytest.approx(1.0, abs=COSINE_ERROR)
    top = index.search("s", vectors[3] + 0.5 * vectors[9], k=3)
    assert [e for e, _ in top[:2]] == ["e3", "e9"]
    assert top[0][1] >= top[1][1] >= top[2][1]


def test_scopes_are_isolated() -> None:
    rng = np.random.default_rng(2)
    v = unit(rng, 2)
    index = VectorIndex()
    index.add(("tenant-a", "gpt"), "a", v[0])
    index.add(("tenant-b", "gpt"), "b", v[1])
    assert index.search(("tenant-b", "gpt"), v[0]) == [("b", pytest.approx(float(v[0] @ v[1]), abs=COSINE_ERROR))]
    assert index.search(("tenant-c", "gpt"), v[0]) == []


def test_remove_swaps_the_last_row_in_and_keeps_ids_right() -> None:
    rng = np.random.default_rng(3)
    vectors = unit(rng, 20)
    index = filled(vectors)
    assert index.remove("e0")
    assert not index.remove("e0")
    assert "e0" not in index and len(index) == 19
    # e19 was moved into row 0: it must still be found, and removable.
    assert index.search("s", vectors[19])[0][0] == "e19"
    assert index.remove("e19")
    for i in range(1, 19):
        assert index.search("s", vectors[i])[0][0] == f"e{i}"
    for i in range(1, 19):
        index.remove(f"e{i}")
    assert index.search("s", vectors[1]) == [] and index.scope_size("s") == 0


def test_readding_an_id_replaces_it() -> None:
    rng = np.random.default_rng(4)
    v = unit(rng, 2)
    index = VectorIndex()
    index.add("s", "x", v[0])
    index.add("t", "x", v[1])
    assert len(index) == 1 and index.scope_size("s") == 0
    assert index.search("t", v[1])[0][0] == "x"


def test_eviction_drops_the_least_recently_used() -> None:
    rng = np.random.default_rng(5)
    vectors = unit(rng, 4)
    index = VectorIndex(max_entries=3)
    for i in range(3):
        assert index.add("s", f"e{i}", vectors[i]) == []
    index.touch("e0")  # e0 was served: e1 is now the oldest
    assert index.add("s", "e3", vectors[3]) == ["e1"]
    assert "e1" not in index and len(index) == 3
    assert {index.search("s", vectors[i])[0][0] for i in (0, 2, 3)} == {"e0", "e2", "e3"}


def test_rejects_wrong_dimension() -> None:
    with pytest.raises(ValueError):
        VectorIndex(dim=8).add("s", "x", np.ones(9, dtype=np.float32))


def test_large_scope_switches_to_ivf_and_still_finds_near_duplicates() -> None:
    rng = np.random.default_rng(6)
    centres = unit(rng, 100)
    vectors = centres[rng.integers(0, 100, 2500)] + rng.normal(0, 0.03, (2500, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex(ivf_min_size=1024)
    for i, v in enumerate(vectors):
        index.add("big", f"e{i}", v)
    assert index._scopes["big"].partition is not None  # white-box: the IVF path is what is tested
    queries = vectors[:200] + rng.normal(0, 0.005, (200, 384)).astype(np.float32)
    truth = np.argmax(queries @ vectors.T, axis=1)
    found = [index.search("big", q)[0][0] == f"e{t}" for q, t in zip(queries, truth, strict=True)]
    assert np.mean(found) >= 0.97
    # Removal keeps working across cells.
    for i in range(0, 2500, 2):
        index.remove(f"e{i}")
    assert index.scope_size("big") == 1250
    assert index.search("big", vectors[1])[0] == ("e1", pytest.approx(1.0, abs=COSINE_ERROR))


def test_rows_keep_half_the_bytes_and_scores_within_the_error() -> None:
    rng = np.random.default_rng(7)
    vectors = unit(rng, 300)
    index = filled(vectors)
    assert index.row_bytes == 384 * 2
    query = unit(rng, 1)[0]
    exact = vectors @ query
    found = dict(index.search("s", query, k=300))
    assert max(abs(found[f"e{i}"] - exact[i]) for i in range(300)) < COSINE_ERROR
