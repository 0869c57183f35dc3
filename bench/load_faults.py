"""Sustained load through two gateway replicas sharing Redis, with faults injected mid-load.

    python -m bench.load_faults [--duration 240] [--rate 60]

Topology as processes (the docker-compose one without containers): redis-server, `cachegate sim` as the
provider, two `cachegate serve` replicas, and a client-side round-robin balancer that, like nginx's
`proxy_next_upstream error timeout` (deploy/nginx.conf), moves a request to the other replica only when the
connection is refused: a POST that reached a replica is never re-sent, so no LLM call is paid twice.
Timeline (fractions of --duration): replica 2 stopped at 0.20 (SIGTERM, as `docker stop` does: it stops
accepting and finishes what it accepted; `--crash` sends SIGKILL instead) and restarted at 0.35; Redis killed at 0.50
and restarted at 0.65; provider faults (429 storm, timeouts, broken streams) queued at 0.75.
Reported: requests sent / answered / lost (accepted by a replica and never answered), status mix and
latency per phase, replica memory over time. Results: bench/results/load_faults.{json,png}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from gateway.config import hash_key
from tests.deploy.processes import Spawned, answers_http, answers_redis, cachegate, spawned
from tests.ports import spawn_port

RESULTS = Path(__file__).resolve().parent / "results"
KEY = "sk-load-test"
SIM_ADMIN_KEY = "sk-load-sim-admin"  # the simulator's /sim/* controls need it
SIM_ADMIN = {"authorization": f"Bearer {SIM_ADMIN_KEY}"}
PHASES = [
    (0.0, "steady"),
    (0.20, "replica down"),
    (0.35, "replica back"),
    (0.50, "redis down"),
    (0.65, "redis back"),
    (0.75, "provider faults"),
    (0.90, "recovered"),
]


@dataclass
class Outcome:
    t: float
    phase: str
    status: str  # HTTP status, or "lost" / "refused-all"
    latency_s: float


@dataclass
class Run:
    outcomes: list[Outcome] = field(default_factory=list)
    memory: list[dict[str, float]] = field(default_factory=list)


def config(sim_url: str, redis_url: str) -> dict[str, Any]:
    return {
        "host": "127.0.0.1",
        "redis_url": redis_url,
        "log_level": "warning",
        "tenants": [{"name": "load", "keys": [hash_key(KEY)]}],
        "models": [
            {
                "name": "gpt-4o-mini",
                "provider": "openai",
                "model": "gpt-4o-mini",
                "api_base": f"{sim_url}/v1",
                "timeout_s": 3,
                "retries": 2,
            },
            {
                "name": "claude-sonnet-4-5",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "api_base": sim_url,
                "timeout_s": 3,
                "retries": 2,
            },
        ],
    }


def request_for(number: int) -> tuple[str, dict[str, Any], dict[str, str]]:
    session = {"x-session-id": f"load-{number % 40}"}
    # Mostly unique prompts, so the provider (and its faults) is really reached; every tenth repeats one
    # of 50 questions, so the response cache has real hits too.
    topic = number % 50 if number % 10 == 3 else number
    question = f"Question {topic}: what is {topic} squared?"
    if number % 10 == 0:
        return (
            "/v1/messages",
            {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": question}]},
            session,
        )
    body = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": question}],
        "stream": number % 5 == 0,
        "temperature": 0,
    }
    return "/v1/chat/completions", body, session


def phase_at(elapsed: float, duration: float) -> str:
    return [name for start, name in PHASES if elapsed >= start * duration][-1]


def rss_mb(process: Spawned) -> float:
    try:
        for line in Path(f"/proc/{process.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


async def send(client: httpx.AsyncClient, replicas: list[str], number: int) -> str:
    path, body, headers = request_for(number)
    headers = {**headers, "authorization": f"Bearer {KEY}", "x-api-key": KEY}
    order = replicas[number % 2 :] + replicas[: number % 2]
    for base in order:
        try:
            if body.get("stream"):
                async with client.stream("POST", base + path, json=body, headers=headers) as response:
                    async for _ in response.aiter_bytes():
                        pass
                    return str(response.status_code)
            response = await client.post(base + path, json=body, headers=headers)
            return str(response.status_code)
        except httpx.ConnectError:
            continue  # refused: the balancer tries the next replica, nothing was accepted
        except httpx.HTTPError as error:
            return f"lost:{type(error).__name__}"  # accepted by a replica, then no complete answer
    return "refused-all"


async def load(replicas: list[str], duration: float, rate: float, run: Run, events: dict[float, Any]) -> None:
    started = time.monotonic()
    pending: set[asyncio.Task[Any]] = set()
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=200)) as client:

        async def one(number: int) -> None:
            sent = time.monotonic()
            status = await send(client, replicas, number)
            elapsed = sent - started
            run.outcomes.append(Outcome(elapsed, phase_at(elapsed, duration), status, time.monotonic() - sent))

        number = 0
        next_report = 0.0
        while (elapsed := time.monotonic() - started) < duration:
            for at in [at for at in events if at <= elapsed]:
                # In the background: the load keeps coming while a replica or Redis restarts.
                action = asyncio.create_task(asyncio.to_thread(events.pop(at)))
                pending.add(action)
                action.add_done_callback(pending.discard)
            task = asyncio.create_task(one(number))
            pending.add(task)
            task.add_done_callback(pending.discard)
            number += 1
            if elapsed >= next_report:
                counts = Counter(o.status for o in run.outcomes)
                print(f"[{elapsed:6.1f}s] {phase_at(elapsed, duration):<16} sent={number} {dict(counts)}", flush=True)
                next_report += 10
            await asyncio.sleep(max(0.0, number / rate - (time.monotonic() - started)))
        await asyncio.gather(*pending)


def summarize(run: Run, duration: float, rate: float) -> dict[str, Any]:
    by_phase: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in run.outcomes:
        by_phase[outcome.phase].append(outcome)

    def stats(items: list[Outcome]) -> dict[str, Any]:
        latencies = sorted(o.latency_s for o in items if o.status == "200")
        pick = (lambda q: latencies[min(int(q * len(latencies)), len(latencies) - 1)] * 1000) if latencies else None
        return {
            "requests": len(items),
            "status": dict(Counter(o.status for o in items)),
            "p50_ms": pick(0.5) if pick else None,
            "p99_ms": pick(0.99) if pick else None,
        }

    total = Counter(o.status for o in run.outcomes)
    return {
        "duration_s": duration,
        "rate": rate,
        "sent": len(run.outcomes),
        "status": dict(total),
        "lost": sum(n for status, n in total.items() if status.startswith("lost")),
        "phases": {name: stats(by_phase[name]) for _, name in PHASES},
        "memory_mb": run.memory,
    }


def plot(result: dict[str, Any], run: Run, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    ok = [(o.t, o.latency_s * 1000) for o in run.outcomes if o.status == "200"]
    bad = [(o.t, o.latency_s * 1000) for o in run.outcomes if o.status != "200"]
    top.scatter(*zip(*ok, strict=True), s=2, label="200") if ok else None
    top.scatter(*zip(*bad, strict=True), s=4, color="red", label="non-200") if bad else None
    top.set_yscale("log")
    top.set_ylabel("latency (ms)")
    top.legend(loc="upper right")
    for start, name in PHASES:
        for axis in (top, bottom):
            axis.axvline(start * result["duration_s"], color="grey", lw=0.5)
        top.text(start * result["duration_s"], top.get_ylim()[1], name, fontsize=7, va="top")
    for replica in ("gateway-1", "gateway-2"):
        points = [(m["t"], m[replica]) for m in run.memory if m.get(replica)]
        if points:
            bottom.plot(*zip(*points, strict=True), label=replica)
    bottom.set_ylabel("RSS (MB)")
    bottom.set_xlabel("seconds")
    bottom.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=240.0)
    parser.add_argument("--rate", type=float, default=60.0, help="requests per second offered")
    parser.add_argument("--crash", action="store_true", help="SIGKILL the replica instead of SIGTERM")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    logs = RESULTS / "load_faults_logs"
    logs.mkdir(exist_ok=True)

    redis_port, sim_port = spawn_port(), spawn_port()
    redis_url, sim_url = f"redis://127.0.0.1:{redis_port}/0", f"http://127.0.0.1:{sim_port}"
    config_file = logs / "cachegate.yaml"
    config_file.write_text(yaml.safe_dump(config(sim_url, redis_url)))
    ports = [spawn_port(), spawn_port()]
    replicas = [f"http://127.0.0.1:{port}" for port in ports]
    redis_argv = ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    serve = [cachegate("serve", "--config", str(config_file), "--port", str(port)) for port in ports]
    run = Run()
    processes: dict[str, Spawned] = {}

    def start(name: str, argv: list[str], ready_url: str | None = None) -> None:
        processes[name] = Spawned(name, argv, logs)
        processes[name].wait_until(answers_http(ready_url) if ready_url else answers_redis(redis_url))

    def kill(name: str, graceful: bool = False) -> None:
        print(f"--- {'stopping' if graceful else 'killing'} {name}", flush=True)
        process = processes[name].process
        if graceful:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        processes[name].kill()

    def provider_faults() -> None:
        print("--- queueing provider faults", flush=True)
        faults = ["429"] * 40 + ["timeout"] * 6 + ["malformed_stream"] * 10 + ["disconnect"] * 10 + ["500"] * 20
        random.Random(7).shuffle(faults)
        httpx.post(f"{sim_url}/sim/faults", json={"faults": faults}, headers=SIM_ADMIN).raise_for_status()

    duration = args.duration
    events = {
        0.20 * duration: lambda: kill("gateway-2", graceful=not args.crash),
        0.35 * duration: lambda: start("gateway-2", serve[1], f"{replicas[1]}/healthz"),
        0.50 * duration: lambda: kill("redis"),
        0.65 * duration: lambda: start("redis", redis_argv),
        0.75 * duration: provider_faults,
    }
    try:
        start("redis", redis_argv)
        sim_argv = cachegate("sim", "--port", str(sim_port), "--admin-key", SIM_ADMIN_KEY)
        with spawned("sim", sim_argv, logs) as sim:
            sim.wait_until(answers_http(f"{sim_url}/healthz"))
            httpx.post(f"{sim_url}/sim/reset", headers=SIM_ADMIN).raise_for_status()
            start("gateway-1", serve[0], f"{replicas[0]}/healthz")
            start("gateway-2", serve[1], f"{replicas[1]}/healthz")

            async def sample_memory() -> None:
                began = time.monotonic()
                while True:
                    run.memory.append(
                        {
                            "t": time.monotonic() - began,
                            **{name: rss_mb(p) for name, p in processes.items() if name.startswith("gateway")},
                        }
                    )
                    await asyncio.sleep(5)

            async def scenario() -> None:
                sampler = asyncio.create_task(sample_memory())
                await load(replicas, duration, args.rate, run, events)
                sampler.cancel()

            asyncio.run(scenario())
    finally:
        for process in processes.values():
            process.kill()
    result = summarize(run, duration, args.rate)
    result["replica_stop"] = "SIGKILL" if args.crash else "SIGTERM"
    (RESULTS / "load_faults.json").write_text(json.dumps(result, indent=2))
    plot(result, run, RESULTS / "load_faults.png")
    print(json.dumps({k: v for k, v in result.items() if k != "memory_mb"}, indent=2))


if __name__ == "__main__":
    main()
