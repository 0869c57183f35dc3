"""Response-cache latency: hits against a miss through the simulator, and lookup cost against cache size.

1. End to end through the HTTP server (a gateway process with the simulator mounted, sequential requests
   on one keep-alive connection), for the embedded memory backend and for Redis (db 12, flushed):
   exact hit, semantic hit (short paraphrased questions), miss (exact lookup + embedding + search +
   simulator + store), bypass (`Cache-Control: no-store`: no cache work, simulator only), and GET /healthz
   as the floor of one HTTP round trip to that process on this machine.
2. Lookup over 1,000 vs 100,000 cached semantic entries in one scope (the worst case: every entry is a
   candidate), in-process: catch-up + vector search + entry read + verifier, and the exact read.

    python -m bench.response_cache_latency [--requests 300] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import yaml

import gateway  # noqa: F401  (offline defaults before sentence-transformers)
from bench.overhead.servers import free_port
from bench.shared_data import require
from gateway.config import hash_key
from gateway.config.response_cache import ResponseCacheConfig
from gateway.response_cache.cache import ResponseCache
from gateway.response_cache.entry import Entry
from gateway.response_cache.keys import canonical_request, exact_key, semantic_scope
from gateway.response_cache.local_index import LocalIndex, index_caps
from gateway.response_cache.metrics import ResponseCacheMetrics
from gateway.response_cache.store import MemoryBackend
from gateway.response_cache.sync import IndexSync
from gateway.semantic.embedder import Embedder
from gateway.traces import shared_dir
from tests.deploy.processes import answers_http, cachegate, redis_server, spawned

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
KEY, ADMIN = "sk-bench-rc", "sk-bench-rc-admin"
EMBED_TIMEOUT_S = 5.0
GOALS = {"exact_hit_p50_ms": 2.0, "semantic_hit_p50_ms": 50.0, "lookup_100k_vs_1k": 2.0}
# Short questions stored as "How do I X?" and asked as "How can I X?" (the verifier accepts the pair).
TASKS = [
    "reverse a list in Python", "read a file line by line", "center a div with flexbox", "undo my last git commit",
    "sort a dictionary by value", "make an HTTP request in JavaScript", "install packages with pip",
    "merge two branches in git", "create a virtual environment", "parse JSON in Go", "rename a column in pandas",
    "check disk usage on linux", "remove duplicates from an array", "write a unit test with pytest",
    "format a date in JavaScript", "kill a process by port", "resize an image with PIL", "list files in a directory",
    "convert a string to an integer", "reset a forgotten password",
]  # fmt: skip


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    if not ordered:
        return {"n": 0}
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 3),
        "p99_ms": round(ordered[int(0.99 * (len(ordered) - 1))] * 1000, 3),
        "n": len(ordered),
    }


@contextmanager
def gateway_process(redis_url: str | None, workdir: Path) -> Iterator[str]:
    port = free_port()
    config: dict[str, Any] = {
        "port": port,
        "embedded_simulator": True,
        "log_level": "warning",
        "models": [{"name": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini", "api_base": "embedded-sim"}],
        "tenants": [{"name": "bench", "keys": [hash_key(KEY)]}],
        "admin_keys": [hash_key(ADMIN)],
        # A shared, loaded machine can take longer than the default 0.5 s to embed; measure, do not time out.
        "policy": {"response_cache": {"embed_timeout_s": EMBED_TIMEOUT_S}},
    }
    if redis_url:
        config["redis_url"] = redis_url
    path = workdir / f"gateway-{port}.yaml"
    path.write_text(yaml.safe_dump(config))
    url = f"http://127.0.0.1:{port}"
    with spawned(f"gateway-{port}", cachegate("serve", "--config", str(path)), workdir) as process:
        process.wait_until(answers_http(f"{url}/healthz"), timeout_s=120)
        yield url


def post(client: httpx.Client, prompt: str, headers: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    response = client.post(
        "/v1/chat/completions",
        json={"model": "gpt-4o-mini", "temperature": 0, "messages": [{"role": "user", "content": prompt}]},
        headers=headers or {},
    )
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed, response.headers.get("x-cachegate-cache", "")


def wait_for_embedder(client: httpx.Client) -> None:
    post(client, f"warm up {uuid.uuid4().hex}")
    deadline = time.monotonic() + 180
    while client.get("/admin/cache/status", headers={"authorization": f"Bearer {ADMIN}"}).json()["embedder"] != "ready":
        if time.monotonic() > deadline:
            raise RuntimeError("embedder did not load")
        time.sleep(0.2)


def end_to_end(backend: str, requests: int, workdir: Path) -> dict[str, Any]:
    if backend != "redis":
        return measure(backend, requests, workdir, None)
    with redis_server(workdir) as (_, redis_url):  # a private server: never a Redis the bench did not start
        return measure(backend, requests, workdir, redis_url)


def measure(backend: str, requests: int, workdir: Path, redis_url: str | None) -> dict[str, Any]:
    with (
        gateway_process(redis_url, workdir) as url,
        httpx.Client(base_url=url, headers={"authorization": f"Bearer {KEY}"}, timeout=30) as client,
    ):
        print(f"[{backend}] gateway up; loading the embedder ...", flush=True)
        wait_for_embedder(client)
        run = uuid.uuid4().hex[:8]
        exact_prompt = f"How do I {TASKS[0]}? {run}"
        post(client, exact_prompt)
        for task in TASKS:
            post(client, f"How do I {task}?")
        # One request of each kind per round, so every kind sees the same machine load.
        healthz: list[float] = []
        bypass: list[float] = []
        misses, exact, semantic = [], [], []
        for i in range(requests):
            started = time.perf_counter()
            client.get("/healthz").raise_for_status()
            healthz.append(time.perf_counter() - started)
            bypass.append(post(client, f"bypass {run} {i}", {"cache-control": "no-store"})[0])
            misses.append(post(client, f"What is item {run} number {i}?"))
            exact.append(post(client, exact_prompt))
            semantic.append(post(client, f"How can I {TASKS[i % len(TASKS)]}?"))
        result = {
            "healthz_floor": percentiles(healthz),
            "bypass_no_store": percentiles(bypass),
            "miss": percentiles([t for t, _ in misses]),
            "exact_hit": percentiles([t for t, tier in exact if tier == "exact"]),
            "semantic_hit": percentiles([t for t, tier in semantic if tier == "semantic"]),
            "semantic_hit_rate": sum(tier == "semantic" for _, tier in semantic) / len(semantic),
        }
        print(f"[{backend}] {json.dumps(result)}", flush=True)
    return result


def base_vectors(embedder: Embedder, count: int) -> np.ndarray:
    """Real sentence embeddings (PAWS sentences) to build synthetic neighbours from."""
    lines = require(shared_dir() / "data" / "semantic-cache" / "paws.tsv").read_text().splitlines()[1 : count + 1]
    return embedder.embed_many([line.split("\t")[0] for line in lines])


async def lookups(size: int, bases: np.ndarray, queries: int) -> dict[str, Any]:
    from prometheus_client import CollectorRegistry

    entries = 2 * size + 1  # an exact and a semantic entry each, all of one tenant
    config = ResponseCacheConfig(
        max_entries=entries,
        index_max_entries_per_tenant=entries,
        index_max_bytes_per_tenant=2**62,
        index_max_bytes=2**62,
    )
    cache = ResponseCache(
        MemoryBackend(config.max_entries),
        LocalIndex(index_caps(config)),
        IndexSync(),
        Embedder(),
        ResponseCacheMetrics(CollectorRegistry()),
    )
    rng = np.random.default_rng(0)
    response = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "cached"}, "finish_reason": "stop"}]
    }
    now, scope, prompt = time.time(), "bench-scope", "How do I reverse a list in Python?"
    started = time.perf_counter()
    for i in range(size):
        noise = rng.standard_normal(size=bases.shape[1], dtype=np.float32) * 0.005
        vector = bases[i % len(bases)] + noise
        key = f"rc:bench:default:gpt-4o-mini:s:{i:032x}"
        await cache.put(
            Entry(key, "openai", response, 0.001, now, now + 3600, prompt, scope, vector / np.linalg.norm(vector))
        )
        await cache.put(Entry(f"rc:bench:default:gpt-4o-mini:x:{i:032x}", "openai", response, 0.001, now, now + 3600))
    fill_s = time.perf_counter() - started
    semantic, exact, found = [], [], 0
    for q in range(queries):
        vector = bases[q % len(bases)] + rng.standard_normal(size=bases.shape[1], dtype=np.float32) * 0.002
        t0 = time.perf_counter()
        hit = await cache.find_semantic(scope, prompt, vector / np.linalg.norm(vector), config, None)
        t1 = time.perf_counter()
        await cache.find_exact(f"rc:bench:default:gpt-4o-mini:x:{q % size:032x}", None)
        exact.append(time.perf_counter() - t1)
        semantic.append(t1 - t0)
        found += hit is not None
    return {
        "entries": size,
        "fill_s": round(fill_s, 2),
        "semantic_lookup": percentiles(semantic),
        "exact_lookup": percentiles(exact),
        "found_rate": found / queries,
    }


def key_cost(repeats: int = 2000) -> dict[str, float]:
    """Microseconds to canonicalise a short chat request and hash its exact key and semantic scope."""
    body = {
        "model": "gpt-4o-mini",
        "temperature": 0,
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello! How can I help?"},
            {"role": "user", "content": "How can I reverse a list in Python?"},
        ],
    }
    started = time.perf_counter()
    for _ in range(repeats):
        canonical = canonical_request("openai", body)
        exact_key("openai", canonical)
        semantic_scope("openai", canonical)
    return {"per_request_us": round((time.perf_counter() - started) / repeats * 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=300, help="requests per measured kind")
    parser.add_argument("--quick", action="store_true", help="100 requests, memory backend only")
    args = parser.parse_args()
    requests = 100 if args.quick else args.requests
    backends = ["memory"] if args.quick else ["memory", "redis"]
    results: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load_avg": os.getloadavg()},
        "goals": GOALS,
    }
    with tempfile.TemporaryDirectory() as tmp:
        results["end_to_end"] = {backend: end_to_end(backend, requests, Path(tmp)) for backend in backends}
    print("lookup scaling: embedding base vectors ...", flush=True)
    bases = base_vectors(Embedder(), 1000)
    scaling = {}
    for size in (1_000, 100_000):
        print(f"lookup scaling: {size} entries ...", flush=True)
        scaling[str(size)] = asyncio.run(lookups(size, bases, 500))
    small, large = scaling["1000"], scaling["100000"]
    results["lookup_scaling"] = scaling
    results["key_computation"] = key_cost()
    results["ratios"] = {
        "semantic_lookup_100k_vs_1k": round(large["semantic_lookup"]["p50_ms"] / small["semantic_lookup"]["p50_ms"], 2),
        "exact_lookup_100k_vs_1k": round(large["exact_lookup"]["p50_ms"] / small["exact_lookup"]["p50_ms"], 2),
        **{
            f"{backend}_miss_vs_exact_hit": round(e2e["miss"]["p50_ms"] / e2e["exact_hit"]["p50_ms"], 1)
            for backend, e2e in results["end_to_end"].items()
        },
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "response_cache_latency.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results["ratios"], indent=2))
    print(f"wrote {RESULTS / 'response_cache_latency.json'}")


if __name__ == "__main__":
    main()
