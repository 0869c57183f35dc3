"""Pool routing: recorded agent sessions through a pool of three simulated deployments, each with its own
prompt cache (a simulator of its own), one of them down for the middle third of the run and one answering
429 bursts (with retry-after). Three runs: one deployment and no faults (the cache-hit ceiling), the pool
with sticky sessions, and the pool balanced request by request (what other gateways do).

    python -m bench.routing [--traces FILE] [--sessions N] [--out DIR]

Reported per run: requests that failed to the client (the pool runs must have none), the prompt-cache
hit ratio (cached over prompt tokens), and cost and savings per deployment, checked against each
deployment's own prices (the third deployment has a negotiated discount).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

import gateway  # noqa: F401  (offline defaults before litellm/tiktoken)
from bench.prompt_cache_replay import RESULTS, TRACES, load_sessions, session_requests
from gateway.app import create_app
from gateway.config import Settings, hash_key
from gateway.sim.app import create_sim_app
from gateway.sim.settings import FaultKind, SimSettings
from gateway.sim.state import SimState
from gateway.usage import Price
from gateway.usage.pricing import route_price
from tests.servers import free_socket, serve_on_socket

POOL = "gpt-4.1-mini"
DEPLOYMENTS = ("steady", "outage", "bursty")
DISCOUNT = {"input": 0.32, "output": 1.28, "cache_read": 0.08}  # per million: 20% off gpt-4.1-mini's list
BURST_EVERY = 60  # requests from one 429 burst on `bursty` to the next
BURST = 4  # requests a burst lasts
TENANT_KEY = "sk-bench-routing"


@dataclass
class Run:
    name: str
    requests: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    by_deployment: dict[str, dict[str, float]] = field(default_factory=dict)
    cost_mismatches: int = 0  # records whose cost differs from the tokens at their deployment's price

    @property
    def hit_ratio(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def settings(sims: dict[str, str], port: int, *, affinity: bool) -> Settings:
    models = [
        {
            "name": POOL,
            "provider": "openai",
            "model": POOL,
            "api_base": f"{url}/v1",
            "api_key_env": None,
            "deployment_id": name,
            "retries": 0,
            **({"prices": {**DISCOUNT}} if name == "bursty" else {}),
        }
        for name, url in sims.items()
    ]
    return Settings.model_validate(
        {
            "port": port,
            "models": models,
            "tenants": [{"name": "bench", "keys": [hash_key(TENANT_KEY)]}],
            "policy": {"response_cache": {"enabled": False}},  # every request must reach a provider
            "pools": {"affinity": affinity, "cooldown_s": 1.0, "breaker_open_s": 2.0},
            "max_body_bytes": 16 * 1024 * 1024,
            "log_level": "warning",
        }
    )


@contextmanager
def deployments(names: tuple[str, ...], traces: Path) -> Iterator[tuple[dict[str, str], dict[str, SimState]]]:
    """One simulator per deployment (its own prompt cache and fault queue): their URLs and states."""
    with ExitStack() as stack:
        urls, states = {}, {}
        for name in names:
            app = create_sim_app(SimSettings(replay_file=traces, retry_after_s=1.0))
            urls[name] = stack.enter_context(serve_on_socket(app, free_socket()))
            states[name] = app.state.sim
        yield urls, states


def schedule(sessions: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The sessions' requests interleaved turn by turn, as concurrent agents send them."""
    queues = [(f"s{n}-{s['id']}", list(session_requests(s, "openai"))) for n, s in enumerate(sessions)]
    order: list[tuple[str, dict[str, Any]]] = []
    while any(requests for _, requests in queues):
        for session_id, requests in queues:
            if requests:
                order.append((session_id, requests.pop(0)))
    return order


def inject(step: int, total: int, states: dict[str, SimState]) -> None:
    """`outage` answers 500 through the middle third of the run; `bursty` answers 429 (retry-after: 1)
    for BURST requests out of every BURST_EVERY."""
    down = {"outage": total // 3 <= step < 2 * total // 3, "bursty": (step + BURST_EVERY // 2) % BURST_EVERY < BURST}
    kinds = {"outage": FaultKind.SERVER_ERROR, "bursty": FaultKind.RATE_LIMIT}
    for name, failing in down.items():
        if name in states:
            states[name].faults.clear()
            if failing:
                states[name].faults.enqueue([kinds[name]] * 4)


def record(client: httpx.Client, url: str, request_id: str) -> dict[str, Any]:
    for _ in range(100):
        found = client.get(f"{url}/v1/requests/{request_id}")
        if found.status_code == 200:
            data: dict[str, Any] = found.json()
            return data
        time.sleep(0.02)
    raise RuntimeError(f"no record for {request_id}")


def account(run: Run, data: dict[str, Any], prices: dict[str, Price]) -> None:
    """Adds a record's tokens, cost and savings to its deployment, checking the cost against its price."""
    placement = data.get("deployment") or {}
    name = placement.get("id", "?")
    tokens = data["tokens"]
    price = prices[name]
    expected = (
        tokens["input"] * price.input
        + tokens["cache_read"] * price.cache_read
        + tokens["cache_write"] * price.cache_write_5m
        + tokens["output"] * price.output
    )
    run.cost_mismatches += abs(expected - data["cost_usd"]) > 1e-9
    row = run.by_deployment.setdefault(name, {"requests": 0, "cost_usd": 0.0, "saved_usd": 0.0})
    row["requests"] += 1
    row["cost_usd"] += data["cost_usd"]
    row["saved_usd"] += data["saved_usd"]


def replay(name: str, names: tuple[str, ...], sessions: list[dict[str, Any]], traces: Path, affinity: bool) -> Run:
    run = Run(name)
    with deployments(names, traces) as (urls, states):
        sock = free_socket()
        config = settings(urls, sock.getsockname()[1], affinity=affinity)
        prices = {m.deployment_id or "": route_price(m) for m in config.models}
        app = create_app(config)
        with serve_on_socket(app, sock) as url, httpx.Client(timeout=120) as client:
            client.headers["authorization"] = f"Bearer {TENANT_KEY}"
            requests = schedule(sessions)
            for step, (session_id, body) in enumerate(requests):
                inject(step, len(requests), states)
                answer = client.post(f"{url}/v1/chat/completions", json=body, headers={"x-session-id": session_id})
                run.requests += 1
                if answer.status_code != 200:
                    run.failed += 1
                    continue
                usage = answer.json()["usage"]
                run.prompt_tokens += usage["prompt_tokens"]
                run.cached_tokens += (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
                account(run, record(client, url, answer.headers["x-request-id"]), prices)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=Path, default=TRACES)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    sessions = load_sessions(args.traces, args.sessions)
    runs = [
        replay("single deployment, no faults", DEPLOYMENTS[:1], sessions, args.traces, affinity=True),
        replay("pool, sticky sessions", DEPLOYMENTS, sessions, args.traces, affinity=True),
        replay("pool, balanced per request", DEPLOYMENTS, sessions, args.traces, affinity=False),
    ]
    ceiling = runs[0].hit_ratio
    summary = {
        "sessions": len(sessions),
        "runs": [{**asdict(run), "hit_ratio": round(run.hit_ratio, 4)} for run in runs],
        "sticky_vs_single": round(runs[1].hit_ratio / ceiling, 4) if ceiling else None,
        "balanced_vs_single": round(runs[2].hit_ratio / ceiling, 4) if ceiling else None,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "routing.json").write_text(json.dumps(summary, indent=2))
    for run in runs:
        print(
            f"{run.name:32} requests={run.requests} failed={run.failed} hit_ratio={run.hit_ratio:.3f} "
            f"cost_mismatches={run.cost_mismatches} {json.dumps(run.by_deployment)}"
        )
    print(f"sticky/single={summary['sticky_vs_single']} balanced/single={summary['balanced_vs_single']}")


if __name__ == "__main__":
    main()
