"""Resident memory of one `cachegate serve` worker after warm-up, with and without the embedding model: what
the Kubernetes manifests' memory requests are sized from (deploy/kubernetes, docs/deployment.md).

A single-worker gateway on the embedded default (its simulator answers) gets mixed traffic: chat and
messages requests at temperature 0, so the semantic tier loads the embedder and embeds, plus exact repeats.
RSS (VmRSS of the process) is read after the traffic, once the embedder answers or is switched off.

    python -m bench.worker_memory [--requests 300] [--redis-url URL]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.deploy.processes import REPO, own_environment
from tests.ports import spawn_port

DEV_KEY = "sk-cachegate-dev"
EMBEDDER_WAIT_S = 180.0


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def warm_up(url: str, requests: int) -> None:
    headers = {"authorization": f"Bearer {DEV_KEY}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        for number in range(requests):
            question = f"In one sentence, what is topic number {number % 50} about?"
            body = {"model": "gpt-4o-mini", "temperature": 0, "messages": [{"role": "user", "content": question}]}
            client.post("/v1/chat/completions", json=body).raise_for_status()


def embedder_loading_skips(url: str) -> float:
    text = httpx.get(f"{url}/metrics").text
    return sum(
        float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("cachegate_response_cache_skips_total") and 'reason="embedder_loading"' in line
    )


def embedder_settled(url: str) -> bool:
    """No request of the last few skipped the semantic tier because the model was still loading."""
    before = embedder_loading_skips(url)
    warm_up(url, 5)
    return embedder_loading_skips(url) == before


def measure(semantic: bool, requests: int, redis_url: str | None) -> float:
    port = spawn_port()
    env = {
        **own_environment(),
        "CACHEGATE_POLICY__RESPONSE_CACHE__SEMANTIC": str(semantic).lower(),
        "CACHEGATE_LEDGER__URL": "sqlite://",  # in memory: no file written in the repo
    }
    if redis_url:  # state and caches in Redis, as in production, instead of the worker's memory
        env["CACHEGATE_REDIS_URL"] = redis_url
    argv = [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port), "--workers", "1"]
    process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gateway did not start")
            time.sleep(0.5)
        warm_up(url, requests)
        deadline = time.monotonic() + EMBEDDER_WAIT_S
        while semantic and not embedder_settled(url) and time.monotonic() < deadline:
            time.sleep(2)
        warm_up(url, requests)
        return rss_mib(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="warm-up requests, sent twice")
    parser.add_argument("--redis-url", help="state in this Redis (8, with its query engine, for the semantic tier)")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    for semantic in (False, True):
        label = "with the embedding model" if semantic else "without (semantic tier off)"
        print(f"one worker, {label}: {measure(semantic, args.requests, args.redis_url):.0f} MiB RSS", flush=True)


if __name__ == "__main__":
    main()
