"""Orchestration: start the fleet, drive every (workload, target) pair, write JSON, PNG and a Markdown table.

    python -m bench.overhead [--quick] [--no-litellm-proxy] [--out overhead]

Latency (p50/p99, and added = target - direct) comes from the sequential phase, where it is the request
path's own cost; requests/s from the concurrent phase (32 in flight), where the 2 cores are saturated by
client, server under test and upstream together. Server CPU per request is read from /proc.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from bench.overhead.report import markdown_table, plot
from bench.overhead.servers import (
    LITELLM_KEY,
    MODELS,
    OPTIONAL_STAGES,
    TENANT_KEY,
    UPSTREAM_KEY,
    Fleet,
    Server,
    fleet,
)

RESULTS = Path(__file__).resolve().parents[1] / "results"
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
GOAL_ADDED_P50_MS = 2.0
GOAL_RPS_RATIO = 3.0


@dataclass(frozen=True)
class Sizes:
    warmup: int
    sequential: int
    count: int
    concurrency: int = 32
    deadline_s: float = 90.0


FULL = Sizes(warmup=100, sequential=300, count=1000, deadline_s=45.0)
QUICK = Sizes(warmup=50, sequential=150, count=400, deadline_s=30.0)


@dataclass(frozen=True)
class Target:
    name: str
    server: Server
    model: str
    key: str


def targets(servers: Fleet, wire: str) -> list[Target]:
    found = [
        Target("direct", servers.upstream, MODELS[wire], UPSTREAM_KEY),
        Target("gateway lean, core", servers.gateway_core, f"{wire}-lean", TENANT_KEY),
        Target("gateway lean, all stages", servers.gateway_all, f"{wire}-lean", TENANT_KEY),
        *[
            Target(f"gateway lean, core + {stage}", servers.gateway_core, f"{wire}-lean+{stage}", TENANT_KEY)
            for stage in OPTIONAL_STAGES
        ],
        Target("gateway litellm path, core", servers.gateway_core, f"{wire}-litellm", TENANT_KEY),
    ]
    if servers.baseline is not None:
        found.insert(2, Target("baseline: gateway lean, core", servers.baseline, f"{wire}-lean", TENANT_KEY))
    if servers.litellm is not None:
        found.append(Target("litellm proxy", servers.litellm, MODELS[wire], LITELLM_KEY))
    return found


def drive(target: Target, wire: str, stream: bool, sizes: Sizes, upstream: Server) -> dict[str, Any]:
    headers = {"authorization": f"Bearer {target.key}", "content-type": "application/json"}
    if wire == "anthropic":
        headers["anthropic-version"] = "2023-06-01"
    spec = {
        "url": target.server.url + PATHS[wire],
        "wire": wire,
        "model": target.model,
        "stream": stream,
        "headers": headers,
        "tag": uuid.uuid4().hex[:8],
        "warmup": sizes.warmup,
        "sequential": sizes.sequential,
        "count": sizes.count,
        "concurrency": sizes.concurrency,
        "deadline_s": sizes.deadline_s,
    }
    cpu_before = target.server.cpu_s(), upstream.cpu_s()
    done = subprocess.run(
        [sys.executable, "-m", "bench.overhead.load", json.dumps(spec)],
        capture_output=True,
        check=True,
        timeout=3 * sizes.deadline_s + 60,
    )
    result: dict[str, Any] = orjson.loads(done.stdout)
    served = sizes.warmup + result["sequential"]["requests"] + result["concurrent"]["requests"]
    if target.server is not upstream:
        result["server_cpu_ms_per_request"] = round((target.server.cpu_s() - cpu_before[0]) / served * 1000, 3)
    result["upstream_cpu_ms_per_request"] = round((upstream.cpu_s() - cpu_before[1]) / served * 1000, 3)
    return result


def measure(servers: Fleet, sizes: Sizes) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for wire in MODELS:
        for stream in (False, True):
            workload = f"{wire}{' stream' if stream else ''}"
            direct: dict[str, Any] | None = None
            for target in targets(servers, wire):
                began = time.monotonic()
                result = drive(target, wire, stream, sizes, servers.upstream)
                direct = direct or result
                seq, conc, base = result["sequential"], result["concurrent"], direct["sequential"]
                row = {
                    "workload": workload,
                    "target": target.name,
                    **result,
                    "added_p50_ms": round(seq["p50_ms"] - base["p50_ms"], 3),
                    "added_p99_ms": round(seq["p99_ms"] - base["p99_ms"], 3),
                }
                rows.append(row)
                errors = seq["errors"] + conc["errors"] + result["warmup_errors"]
                print(
                    f"  {workload:<17} {target.name:<36} p50 {seq['p50_ms']:7.2f} ms (+{row['added_p50_ms']:.2f})"
                    f"  p99 {seq['p99_ms']:7.2f} ms  {conc['rps']:7.1f} req/s  errors {errors}"
                    f"  [{time.monotonic() - began:.0f} s]",
                    flush=True,
                )
                if errors:
                    print(f"    first error: {seq['first_error'] or conc['first_error'] or result['warmup_error']}")
    return rows


def goals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    verdicts: dict[str, Any] = {}
    for workload in dict.fromkeys(r["workload"] for r in rows):
        by_target = {r["target"]: r for r in rows if r["workload"] == workload}
        lean, proxy = by_target["gateway lean, core"], by_target.get("litellm proxy")
        ratio = lean["concurrent"]["rps"] / proxy["concurrent"]["rps"] if proxy else None
        verdicts[workload] = {
            "added_p50_ms": lean["added_p50_ms"],
            "added_p50_met": lean["added_p50_ms"] <= GOAL_ADDED_P50_MS,
            "rps_vs_litellm_proxy": round(ratio, 2) if ratio else None,
            "rps_met": ratio is not None and ratio >= GOAL_RPS_RATIO,
        }
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer requests (a smoke run)")
    parser.add_argument("--no-litellm-proxy", action="store_true", help="skip LiteLLM's proxy")
    parser.add_argument("--out", default="overhead", help="result name under bench/results/")
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        help="also run the core gateway from this source tree (e.g. a copy before a change)",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cachegate-overhead-") as tmp:
        print("starting the upstream, the gateways and LiteLLM's proxy (~1 min) ...", flush=True)
        with fleet(Path(tmp), not args.no_litellm_proxy, args.baseline_tree) as servers:
            rows = measure(servers, sizes)
    verdicts = goals(rows)
    result = {
        "benchmark": "overhead",
        "quick": args.quick,
        "sizes": sizes.__dict__,
        "rows": rows,
        "goals": {"added_p50_ms_max": GOAL_ADDED_P50_MS, "rps_ratio_min": GOAL_RPS_RATIO, "by_workload": verdicts},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_average": list(os.getloadavg())},
    }
    (RESULTS / f"{args.out}.json").write_text(json.dumps(result, indent=2) + "\n")
    plot(rows, RESULTS / f"{args.out}.png")
    print(markdown_table(rows))
    print(f"wrote {RESULTS / (args.out + '.json')} and {args.out}.png")
    for workload, verdict in verdicts.items():
        latency_ok, rps_ok = ("met" if verdict[k] else "NOT met" for k in ("added_p50_met", "rps_met"))
        print(
            f"goal {workload}: added p50 {verdict['added_p50_ms']:.2f} ms ({latency_ok}), "
            f"req/s x{verdict['rps_vs_litellm_proxy']} of LiteLLM proxy ({rps_ok})"
        )
    return 0
