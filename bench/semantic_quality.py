"""Semantic-cache quality and speed: which cosine threshold to serve at, with and without the verifier.

Run: ``python -m bench.semantic_quality`` (~3-6 min on 2 cores). Writes bench/results/semantic_quality.json
and .png.

Quality: every labelled pair (q1 cached, q2 asked) of PAWS and number-change is embedded with the
gateway's Embedder. A pair is "served" when cosine >= threshold (and, with the verifier, when
``verify(q1, q2)`` accepts). Pairs are split in two halves by a hash of q1 (a cached sentence never
sits in both halves): the threshold is chosen on the "choose" half as the lowest one whose wrong-answer
rate (served must-miss pairs) is <= 1% on both must-miss sets, and every rate reported for it comes
from the other, "report" half.

Speed: embedding p50 (one short prompt alone, and concurrent prompts batched) and index search p50
at 1,000 vs 100,000 entries in one scope, with the ratio, measured in this run.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import gateway  # noqa: F401  - offline defaults before sentence-transformers
from gateway.semantic.embedder import Embedder
from gateway.semantic.index import VectorIndex
from gateway.semantic.verifier import verify

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
MAX_WRONG = 0.01
THRESHOLDS = [round(0.80 + 0.005 * i, 3) for i in range(40)] + [0.997, 0.999]


def shared_dir() -> Path:
    return Path(os.environ.get("CACHEGATE_SHARED_DIR", ROOT / ".." / "shared")).resolve()


@dataclass
class PairSet:
    name: str
    cosine: np.ndarray
    verified: np.ndarray
    half: np.ndarray  # 0 = choose, 1 = report

    def served(self, threshold: float, with_verifier: bool, half: int) -> tuple[int, int]:
        mask = self.half == half
        hit = self.cosine[mask] >= threshold
        if with_verifier:
            hit &= self.verified[mask]
        return int(hit.sum()), int(mask.sum())


def read_pairs(path: Path) -> list[tuple[str, str, int]]:
    with path.open(newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [(q1, q2, int(label)) for q1, q2, label in rows[1:]]


def half_of(text: str) -> int:
    return hashlib.sha256(text.encode()).digest()[0] & 1


def build_sets(embedder: Embedder) -> tuple[list[PairSet], np.ndarray]:
    data = shared_dir() / "data" / "semantic-cache"
    paws = read_pairs(data / "paws.tsv")
    groups = {
        "should_hit (PAWS 1)": [p for p in paws if p[2] == 1],
        "must_miss PAWS 0": [p for p in paws if p[2] == 0],
        "must_miss number-change": read_pairs(data / "number-change.tsv"),
    }
    texts = sorted({t for pairs in groups.values() for p in pairs for t in p[:2]})
    print(f"embedding {len(texts)} unique texts ...", flush=True)
    start = time.perf_counter()
    vectors: list[np.ndarray] = []
    for i in range(0, len(texts), 1024):
        vectors.append(embedder.embed_many(texts[i : i + 1024]))
        print(f"  {min(i + 1024, len(texts))}/{len(texts)} ({time.perf_counter() - start:.0f} s)", flush=True)
    matrix = np.concatenate(vectors)
    row = {t: i for i, t in enumerate(texts)}
    sets = []
    for name, pairs in groups.items():
        cosine = np.array([matrix[row[a]] @ matrix[row[b]] for a, b, _ in pairs])
        verified = np.array([verify(a, b).ok for a, b, _ in pairs])
        half = np.array([half_of(a) for a, _, _ in pairs])
        sets.append(PairSet(name, cosine, verified, half))
    return sets, matrix


def grid(sets: list[PairSet], with_verifier: bool, half: int) -> list[dict[str, float]]:
    rows = []
    for threshold in THRESHOLDS:
        row: dict[str, float] = {"threshold": threshold}
        for pair_set in sets:
            served, total = pair_set.served(threshold, with_verifier, half)
            row[pair_set.name] = served / total
        rows.append(row)
    return rows


def choose(rows: list[dict[str, float]], must_miss: list[str]) -> float | None:
    """The lowest threshold (most hits) whose wrong-answer rate is within MAX_WRONG on every set."""
    return next((r["threshold"] for r in rows if all(r[name] <= MAX_WRONG for name in must_miss)), None)


def at(rows: list[dict[str, float]], threshold: float | None) -> dict[str, float] | None:
    return next((r for r in rows if r["threshold"] == threshold), None)


def quality(sets: list[PairSet]) -> dict[str, object]:
    must_miss = [s.name for s in sets if s.name.startswith("must_miss")]
    out: dict[str, object] = {
        "pairs": {s.name: {"choose": int((s.half == 0).sum()), "report": int((s.half == 1).sum())} for s in sets}
    }
    for with_verifier in (True, False):
        label = "with_verifier" if with_verifier else "cosine_only"
        chosen = choose(grid(sets, with_verifier, half=0), must_miss)
        report = grid(sets, with_verifier, half=1)
        out[label] = {"chosen_threshold": chosen, "report_half_at_chosen": at(report, chosen), "grid": report}
    return out


def p50_us(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


async def async_latency(embedder: Embedder, prompts: list[str]) -> dict[str, float]:
    await embedder.warmup()
    alone = []
    for prompt in prompts[:30]:
        start = time.perf_counter()
        await embedder.embed(prompt)
        alone.append(time.perf_counter() - start)
    batched = []
    calls_before = embedder.model_calls
    for i in range(0, 96, 32):
        group = prompts[i : i + 32]
        start = time.perf_counter()
        await asyncio.gather(*(embedder.embed(p) for p in group))
        batched.append((time.perf_counter() - start) / len(group))
    return {
        "async_one_prompt_p50_ms": statistics.median(alone) * 1e3,
        "async_32_concurrent_per_prompt_p50_ms": statistics.median(batched) * 1e3,
        "model_calls_for_96_concurrent": embedder.model_calls - calls_before,
    }


def embedding_latency(embedder: Embedder) -> dict[str, float]:
    prompts = [f"What is the capital of country number {i}?" for i in range(96)]
    result = {
        "sync_one_prompt_p50_ms": p50_us(lambda: embedder.embed_many(prompts[:1]), 30) / 1e3,
        "sync_batch_of_32_per_prompt_p50_ms": p50_us(lambda: embedder.embed_many(prompts[:32]), 5) / 32e3,
    }
    result.update(asyncio.run(async_latency(embedder, prompts)))
    return result


def index_latency(real: np.ndarray) -> dict[str, float]:
    """Search p50 in one scope of 1,000 vs 100,000 entries: noisy copies of real prompt embeddings."""
    rng = np.random.default_rng(0)

    def around(n: int, noise: float) -> np.ndarray:
        v = real[rng.integers(0, len(real), n)] + rng.normal(0, noise, (n, real.shape[1])).astype(np.float32)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    queries = around(1000, 0.03)
    result: dict[str, float] = {}
    indexes: dict[int, VectorIndex] = {}
    for size in (1_000, 100_000):
        data = around(size, 0.03)
        index = indexes[size] = VectorIndex(dim=real.shape[1])
        start = time.perf_counter()
        for i, vector in enumerate(data):
            index.add("scope", str(i), vector)
        result[f"build_{size}_s"] = time.perf_counter() - start
        print(f"  index {size}: build {result[f'build_{size}_s']:.1f} s", flush=True)
    # Alternate the sizes over a few rounds so load from other processes hits both alike.
    rounds: dict[int, list[float]] = {size: [] for size in indexes}
    for _ in range(3):
        for size, index in indexes.items():
            rounds[size].append(search_p50_us(index, queries))
    for size, p50s in rounds.items():
        result[f"search_{size}_p50_us"] = statistics.median(p50s)
    # Near-duplicate queries (what a cache serves): does IVF find brute force's top-1?
    picks = rng.integers(0, len(data), 500)
    for noise in (0.01, 0.02):
        near = data[picks] + rng.normal(0, noise, (500, data.shape[1])).astype(np.float32)
        near /= np.linalg.norm(near, axis=1, keepdims=True)
        scores = near @ data.T
        truth = scores.argmax(axis=1)
        found = [index.search("scope", q)[0][0] == str(t) for q, t in zip(near, truth, strict=True)]
        result[f"recall_at_1_mean_cos_{scores.max(axis=1).mean():.2f}"] = float(np.mean(found))
    result["brute_force_100000_p50_us"] = p50_us(lambda: int(np.argmax(data @ queries[0])), 50)
    result["ratio_100000_vs_1000"] = result["search_100000_p50_us"] / result["search_1000_p50_us"]
    return result


def search_p50_us(index: VectorIndex, queries: np.ndarray) -> float:
    times = []
    for query in queries:
        start = time.perf_counter()
        index.search("scope", query)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def plot(results: dict[str, object], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, must_miss in zip(axes, ("must_miss PAWS 0", "must_miss number-change"), strict=True):
        for label, style in (("with_verifier", "o-"), ("cosine_only", "s--")):
            section = results[label]
            assert isinstance(section, dict)
            rows = section["grid"]
            ax.plot([r[must_miss] for r in rows], [r["should_hit (PAWS 1)"] for r in rows], style, ms=3, label=label)
            chosen = at(rows, section["chosen_threshold"])
            if chosen:
                ax.annotate(f"{chosen['threshold']}", (chosen[must_miss], chosen["should_hit (PAWS 1)"]))
        ax.axvline(MAX_WRONG, color="grey", lw=0.8, ls=":")
        ax.set_xscale("symlog", linthresh=0.01)
        ax.set_xlim(left=0)
        ax.set_xlabel(f"wrong answers served ({must_miss})")
        ax.set_ylabel("should-hit pairs served")
        ax.set_title(f"report half, cosine thresholds {THRESHOLDS[0]}-{THRESHOLDS[-1]}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    started = time.perf_counter()
    load_at_start = os.getloadavg()[0]
    embedder = Embedder()
    sets, vectors = build_sets(embedder)
    results: dict[str, object] = {"load_average_1m_at_start": load_at_start, "quality": quality(sets)}
    print("embedding latency ...", flush=True)
    results["embedding"] = embedding_latency(embedder)
    print("index latency ...", flush=True)
    results["index"] = index_latency(vectors)
    results["seconds"] = time.perf_counter() - started
    # The machine is shared: say how busy it was, since every latency scales with it.
    results["load_average_1m_at_end"] = os.getloadavg()[0]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "semantic_quality.json").write_text(json.dumps(results, indent=2))
    quality_results = results["quality"]
    assert isinstance(quality_results, dict)
    plot(quality_results, RESULTS / "semantic_quality.png")
    for label in ("with_verifier", "cosine_only"):
        section = quality_results[label]
        print(label, "chosen", section["chosen_threshold"], "report half:", section["report_half_at_chosen"])
    print(json.dumps({k: results[k] for k in ("embedding", "index")}, indent=2))
    print(f"done in {results['seconds']:.0f} s")


if __name__ == "__main__":
    main()
