"""MCP gateway overhead: a tool call through /mcp against the same call made to the MCP server directly.

Three processes on loopback: the test MCP server (tests/mcp/tool_server.py, Streamable HTTP), a gateway
(`cachegate serve`) fronting it, and this client (the official MCP SDK's, one connection each). Calls are
sequential reads of distinct small files (so the loop guard judges every call and never trips), timed per
call: direct, through the gateway without a session (access check, forwarding, record, metrics), and with
a session (plus the loop guard's state: one store round trip before the call, one after). Goal: under
2 ms p50 over the direct call.

    python -m bench.mcp_overhead [--calls 500] [--redis redis://127.0.0.1:6379/13]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gateway.config import hash_key
from tests.deploy.processes import cachegate, free_port, spawned

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
KEY = "sk-bench-mcp"
FILES = 100
GOAL_P50_MS = 2.0


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@asynccontextmanager
async def client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0))
    async with http, Client(streamable_http_client(url, http_client=http), cache=None) as connected:
        await connected.list_tools()
        yield connected


async def timed_calls(url: str, headers: dict[str, str], tool: str, calls: int) -> list[float]:
    async with client(url, headers) as connected:
        for i in range(min(50, calls)):  # warm-up: connections, caches, the JIT-free interpreter's paths
            await connected.call_tool(tool, {"path": f"f{i % FILES}.txt"})
        spent = []
        for i in range(calls):
            started = time.perf_counter()
            result = await connected.call_tool(tool, {"path": f"f{i % FILES}.txt"})
            spent.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result
        return spent


def summary(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
    }


async def measure(direct_url: str, gateway_url: str, calls: int) -> dict[str, dict[str, float]]:
    auth = {"authorization": f"Bearer {KEY}"}
    runs = {
        "direct": await timed_calls(direct_url, {}, "read_file", calls),
        "gateway": await timed_calls(gateway_url, auth, "files__read_file", calls),
        "gateway_session": await timed_calls(gateway_url, {**auth, "x-session-id": "bench"}, "files__read_file", calls),
    }
    return {name: summary(ms) for name, ms in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--redis", default=None, help="the gateway's shared store (default: in-process)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        root = work / "root"
        root.mkdir()
        for i in range(FILES):
            (root / f"f{i}.txt").write_text(f"file {i}\n" * 20)
        tool_port, gateway_port = free_port(), free_port()
        config = {
            "port": gateway_port,
            "redis_url": args.redis,
            "tenants": [{"name": "bench", "keys": [hash_key(KEY)]}],
            "ledger": {"enabled": False},
            "mcp": {"servers": [{"name": "files", "url": f"http://127.0.0.1:{tool_port}/mcp"}]},
        }
        (work / "gateway.yaml").write_text(yaml.safe_dump(config))
        tool_argv = [sys.executable, "-m", "tests.mcp.tool_server", str(tool_port), str(root)]
        gateway_argv = cachegate("serve", "--config", str(work / "gateway.yaml"))
        with spawned("mcp-server", tool_argv, work) as tools, spawned("gateway", gateway_argv, work) as gw:
            tools.wait_until(lambda: listening(tool_port))
            gw.wait_until(lambda: listening(gateway_port))
            results = asyncio.run(
                measure(f"http://127.0.0.1:{tool_port}/mcp", f"http://127.0.0.1:{gateway_port}/mcp", args.calls)
            )
    direct = results["direct"]["p50_ms"]
    overhead = {name: round(r["p50_ms"] - direct, 3) for name, r in results.items() if name != "direct"}
    report = {
        "calls": args.calls,
        "store": "redis" if args.redis else "memory",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load_1m": os.getloadavg()[0]},
        "results": results,
        "overhead_p50_ms": overhead,
        "goal_p50_ms": GOAL_P50_MS,
        "met": all(value < GOAL_P50_MS for value in overhead.values()),
    }
    RESULTS.mkdir(exist_ok=True)
    suffix = "_redis" if args.redis else ""
    (RESULTS / f"mcp_overhead{suffix}.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
