"""Memory and time of the semantic index per 100,000 entries (docs/design/semantic-index.md).

    python -m bench.semantic_index_footprint [--entries 100000] [--scopes 100] --out DIR

Synthetic (no data file): random unit vectors of all-MiniLM-L6-v2's size, one tenant, entries spread
evenly over the scopes. Output: DIR/semantic_index_footprint.json.
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc
import uuid
from pathlib import Path

import numpy as np

from gateway.bounded import Caps
from gateway.response_cache.local_index import LocalIndex
from gateway.semantic.index import STORAGE_DTYPE

DIM = 384
SEARCHES = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--scopes", type=int, default=100)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(args.entries, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = [f"rc:acme:default:gpt-4o-mini:{uuid.uuid4().hex}:{uuid.uuid4().hex[:16]}" for _ in vectors]
    index = LocalIndex(Caps(10**9, 10**12, 10**9, 10**12))
    expires = time.time() + 3600
    tracemalloc.start()
    started = time.perf_counter()
    for i, key in enumerate(keys):
        index.add(key, f"scope-{i % args.scopes}", vectors[i], expires)
        if i % 20_000 == 0:
            print(f"  added {i:,} / {args.entries:,}", flush=True)
    added_s = time.perf_counter() - started
    traced = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    started = time.perf_counter()
    for _ in range(SEARCHES):
        index.search("scope-1", vectors[1], 5, 0.9)
    result = {
        "entries": args.entries,
        "scopes": args.scopes,
        "storage_dtype": "bfloat16 (uint16 bits)",
        "traced_mb": round(traced / 1e6, 1),
        "accounted_mb": round(index.bytes / 1e6, 1),
        "vector_mb": round(args.entries * DIM * np.dtype(STORAGE_DTYPE).itemsize / 1e6, 1),
        "add_s": round(added_s, 2),
        "search_ms": round((time.perf_counter() - started) / SEARCHES * 1000, 3),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "semantic_index_footprint.json").write_text(json.dumps(result, indent=1))
    print(result)


if __name__ == "__main__":
    main()
