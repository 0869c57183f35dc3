"""Production-like load: a provider with a fixed latency, open-loop agent traffic, in one run against the
provider direct, cachegate with its default stages, cachegate with the optional stages off, and
(optionally) LiteLLM's proxy. Issue 15, item 1.

    python -m bench.production_load [--rates 200 500] [--duration 20] [--delay 1.5] [--litellm]
        [--workers N] [--targets NAME ...] [--workloads agent synthetic] [--traces FILE] [--sessions N]
        [--buckets 10] --out DIR

Processes: the bench upstream (bench/overhead/upstream.py, answering after --delay seconds), the two
gateways of bench/overhead/servers.py (one with the default stages, one core only), with --workers N a
gateway with N workers and N one-process replicas (both on a private Redis; the agent generator sends each
session's turns to one replica by a hash of its id, as deploy/nginx.conf balances; one replica alone is
the one-process-on-Redis row, which parts Redis's cost from a second process's), LiteLLM's proxy with
--litellm, and one generator process per measurement. Workloads, each in OpenAI Chat non-streamed and
Anthropic Messages streamed: `agent`, recorded agent sessions with their tools replayed turn by turn
(--traces, default shared/data/agent-traces; bench/production_load/agent.py), and `synthetic`, sessions
of 4 one-line turns generated from a run tag (bench/production_load/generate.py). Reported per rate,
workload and target: share answered, p50 / p99 latency (and their excess over the provider-direct run of
the same rate and workload), server CPU per request, and for the agent workload CPU per request in each
tenth of the sessions' turns. Output: DIR/production_load.{json,png} (latency over time) and
DIR/production_load_history.png (CPU per request against the history's length).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

from bench.overhead.run import PATHS
from bench.overhead.servers import (
    LITELLM_KEY,
    MODELS,
    TENANT_KEY,
    UPSTREAM_KEY,
    Fleet,
    Server,
    children,
    fleet,
)
from bench.production_load.generate import client_headers
from bench.shared_data import require
from gateway.traces import default_traces

WIRES = [("openai", False), ("anthropic", True)]
TURNS = 4


Target = tuple[str, tuple[Server, ...], str, str]  # name, its processes (replicas), model, key


def targets(servers: Fleet, wire: str, workers: int, workload: str) -> list[Target]:
    found: list[Target] = [
        ("provider direct", (servers.upstream,), MODELS[wire], UPSTREAM_KEY),
        ("cachegate, default stages", (servers.gateway_all,), f"{wire}-lean", TENANT_KEY),
        ("cachegate, optional stages off", (servers.gateway_core,), f"{wire}-lean", TENANT_KEY),
    ]
    if servers.gateway_workers is not None:
        found.append((f"cachegate, default stages, {workers} workers", (servers.gateway_workers,), f"{wire}-lean",
                      TENANT_KEY))  # fmt: skip
    if servers.gateway_replicas:  # one of the replicas alone: Redis's cost apart from a second process's
        found.append(("cachegate, default stages, Redis, one process", servers.gateway_replicas[:1],
                      f"{wire}-lean", TENANT_KEY))  # fmt: skip
    if servers.gateway_replicas and workload == "agent":  # the agent generator routes a session by its id
        found.append((f"cachegate, default stages, {workers} replicas by session", servers.gateway_replicas,
                      f"{wire}-lean", TENANT_KEY))  # fmt: skip
    if servers.litellm is not None:
        found.append(("LiteLLM proxy", (servers.litellm,), MODELS[wire], LITELLM_KEY))
    return found


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1] if len(values) > 1 else 0.0


def generate(workload: str, spec: dict[str, Any], group: tuple[Server, ...], args: Any) -> dict[str, Any]:
    """Run one generator process; its JSON result."""
    if workload == "agent":
        module = "bench.production_load.agent"
        pids = [pid for server in group for pid in (server.process.pid, *children(server.process.pid))]
        spec |= {"traces": str(args.traces), "sessions": args.sessions, "buckets": args.buckets, "pids": pids}
        spec |= {"parts": str(args.parts or "")}
    else:
        module = "bench.production_load.generate"
        spec |= {"duration_s": args.duration, "turns": TURNS}
    done = subprocess.run(
        [sys.executable, "-m", module, json.dumps(spec)],
        stdout=subprocess.PIPE,  # stderr (the agent generator's progress) goes to ours
        check=True,
        timeout=args.duration * 4 + 900,
    )
    result: dict[str, Any] = orjson.loads(done.stdout)
    return result


def measure(
    name: str,
    group: tuple[Server, ...],
    model: str,
    key: str,
    wire: str,
    stream: bool,
    rate: float,
    workload: str,
    args: Any,
) -> dict[str, Any]:
    """One target at one rate and workload; a group of replicas is sent each session's turns by one of them
    (a hash of its id, as deploy/nginx.conf balances) and measured by their CPU together."""
    spec: dict[str, Any] = {
        "url": group[0].url + PATHS[wire], "wire": wire, "model": model, "stream": stream,
        "headers": client_headers(wire, key),
        "tag": uuid.uuid4().hex[:8], "rate": rate, "timeout_s": 60.0,
    }  # fmt: skip
    if len(group) > 1:
        spec["replicas"] = [server.url + PATHS[wire] for server in group]
    cpu = sum(server.cpu_s() for server in group)
    result = generate(workload, spec, group, args)
    samples = result.pop("samples")
    latencies = [latency for _, latency, status in samples if status == "ok"]
    timeline = [(start, latency) for start, latency, status in samples if status == "ok"]
    row = {
        "rate": rate, "workload": f"{workload} {wire}{' stream' if stream else ''}", "target": name,
        "requests": len(samples), "ok_share": round(len(latencies) / max(len(samples), 1), 4),
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 1), "p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
        "server_cpu_ms_per_request": round(
            (sum(server.cpu_s() for server in group) - cpu) / max(len(samples), 1) * 1000, 3
        ),
        "schedule_slip_s": result["schedule_slip_s"],
        "errors": sorted({status for _, _, status in samples if status != "ok"}),
        "timeline": timeline[:: max(1, len(timeline) // 600)],
    }  # fmt: skip
    if "buckets" in result:
        row["buckets"] = result["buckets"]
        row["idle_cpu_ms_per_s"] = result["idle_cpu_ms_per_s"]
        first, last = result["buckets"][0]["cpu_ms_per_request"], result["buckets"][-1]["cpu_ms_per_request"]
        row["cpu_last_over_first_tenth"] = round(last / first, 2) if first > 0 else None
    growth = f"  last/first tenth {row['cpu_last_over_first_tenth']}" if "buckets" in row else ""
    print(f"  {rate:>5.0f}/s {row['workload']:<23} {name:<32} ok {row['ok_share']:.1%}  p50 {row['p50_ms']:>8.1f} ms"
          f"  p99 {row['p99_ms']:>8.1f} ms  cpu {row['server_cpu_ms_per_request']:.2f} ms/req"
          f"{growth}", flush=True)  # fmt: skip
    return row


def with_excess(rows: list[dict[str, Any]]) -> None:
    """Each row's p50 / p99 above the provider-direct row of the same rate and workload."""
    direct = {(r["rate"], r["workload"]): r for r in rows if r["target"] == "provider direct"}
    for row in rows:
        base = direct.get((row["rate"], row["workload"]))
        if base is not None and row is not base:
            row["p50_excess_ms"] = round(row["p50_ms"] - base["p50_ms"], 1)
            row["p99_excess_ms"] = round(row["p99_ms"] - base["p99_ms"], 1)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["rate"], r["workload"]) for r in rows})
    figure, axes = plt.subplots(len(panels), 1, figsize=(10, 3.2 * len(panels)), squeeze=False)
    for axis, (rate, workload) in zip(axes[:, 0], panels, strict=True):
        for row in (r for r in rows if (r["rate"], r["workload"]) == (rate, workload)):
            starts, latencies = zip(*row["timeline"], strict=True) if row["timeline"] else ((), ())
            axis.plot(starts, [lat * 1000 for lat in latencies], ".", markersize=2, label=row["target"])
        axis.set_title(f"{workload}, {rate:.0f} req/s offered (open loop)")
        axis.set_xlabel("request start, s")
        axis.set_ylabel("latency, ms")
        axis.legend(fontsize=8, markerscale=4)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def plot_history(rows: list[dict[str, Any]], path: Path) -> None:
    """CPU per request in each tenth of the sessions' turns, one panel per rate and agent workload."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["rate"], r["workload"]) for r in rows if "buckets" in r})
    if not panels:
        return
    figure, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for axis, (rate, workload) in zip(axes[0], panels, strict=True):
        for row in (r for r in rows if (r["rate"], r["workload"]) == (rate, workload) and "buckets" in r):
            sizes = [b["mean_body_kb"] for b in row["buckets"]]
            axis.plot(sizes, [b["cpu_ms_per_request"] for b in row["buckets"]], "o-", label=row["target"])
        axis.set_title(f"{workload}, {rate:.0f} req/s", fontsize=10)
        axis.set_xlabel(f"mean request body, KB (the sessions' turns in {len(row['buckets'])} parts)")
        axis.set_ylabel("server CPU per request, ms")
        axis.set_ylim(bottom=0)
        axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[200.0, 500.0])
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of load per synthetic measurement")
    parser.add_argument("--delay", type=float, default=1.5, help="the provider's fixed latency, seconds")
    parser.add_argument("--litellm", action="store_true", help="also LiteLLM's proxy (slow to start)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="N > 1: also cachegate with --workers N, and N one-process replicas each session's turns go to one of"
        " (state in a private Redis)",
    )
    parser.add_argument(
        "--targets", nargs="+", help="only the targets whose name contains one of these (e.g. direct workers)"
    )
    parser.add_argument("--workloads", nargs="+", choices=("agent", "synthetic"), default=["agent", "synthetic"])
    parser.add_argument("--traces", type=Path, default=default_traces(), help="agent sessions (JSONL, .gz or not)")
    parser.add_argument("--sessions", type=int, default=0, help="agent workload: N sessions spread over the file")
    parser.add_argument("--buckets", type=int, default=10, help="agent workload: parts of each session measured")
    parser.add_argument(
        "--parts",
        type=Path,
        help="agent workload: tools and system prompt sent instead of the sessions' (JSON: Anthropic-shaped "
        "`tools` and `system`, e.g. an agent CLI's, written by bench.production_load.capture)",
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for production_load{,_history}.{json,png}")
    args = parser.parse_args()
    if "agent" in args.workloads:
        require(args.traces, "--traces")
        if args.parts:
            require(args.parts, "--parts")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as workdir:
        print("starting the provider stand-in and the gateways ...", flush=True)
        fleet_of = fleet(Path(workdir), args.litellm, upstream_delay_s=args.delay, workers=args.workers)
        with fleet_of as servers:
            for rate in args.rates:
                for workload in args.workloads:
                    for wire, stream in WIRES:
                        for name, group, model, key in targets(servers, wire, args.workers, workload):
                            if args.targets and not any(part in name for part in args.targets):
                                continue
                            rows.append(measure(name, group, model, key, wire, stream, rate, workload, args))
    with_excess(rows)
    plot(rows, args.out / "production_load.png")
    plot_history(rows, args.out / "production_load_history.png")
    command = "python -m bench.production_load " + " ".join(sys.argv[1:])
    report = {"command": command, "seconds": round(time.perf_counter() - started), "rows": rows}
    (args.out / "production_load.json").write_text(json.dumps(report, indent=1))
    for row in rows:
        print({k: v for k, v in row.items() if k not in ("timeline", "buckets")})


if __name__ == "__main__":
    main()
