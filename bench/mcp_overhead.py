"""MCP gateway overhead: a tool call through /mcp against the same call made to the MCP server directly.

Three processes on loopback: the test MCP server (tests/mcp/tool_server.py, Streamable HTTP), a gateway
(`cachegate serve`) fronting it, and this client (the official MCP SDK's, one connection each). Calls are
sequential reads of distinct small files (so the loop guard judges every call and never trips), timed per
call: direct, through the gateway without a session (access check, forwarding, record, metrics), and with
a session (plus the loop guard's state: one store round trip before the call, one after). Goal: under
2 ms p50 over the direct call.

The machine is shared: besides wall-clock percentiles, each run reports the CPU time per call of each
process (from /proc: the client, the tool server, the gateway), which load does not inflate as much.
`--profile FILE` samples the gateway with py-spy during the session run (collapsed stacks, for a flame
graph or `sort | uniq`).

    python -m bench.mcp_overhead [--calls 500] [--redis redis://127.0.0.1:6379/13] [--profile FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx2
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gateway.config import hash_key
from tests.deploy.processes import cachegate, spawned
from tests.ports import spawn_port

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


def cpu_seconds(pid: int | None) -> float:
    """CPU time (user + system) a process has used so far; None: this one."""
    if pid is None:
        return time.process_time()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


async def timed_calls(
    url: str, headers: dict[str, str], tool: str, calls: int, pids: dict[str, int | None]
) -> dict[str, float]:
    async with client(url, headers) as connected:
        for i in range(min(50, calls)):  # warm-up: connections, caches, the JIT-free interpreter's paths
            await connected.call_tool(tool, {"path": f"f{i % FILES}.txt"})
        spent = []
        cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
        for i in range(calls):
            started = time.perf_counter()
            result = await connected.call_tool(tool, {"path": f"f{i % FILES}.txt"})
            spent.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result
        used = {f"cpu_ms_per_call_{name}": (cpu_seconds(pid) - cpu[name]) * 1000 / calls for name, pid in pids.items()}
        return {**summary(spent), **{name: round(ms, 3) for name, ms in used.items()}}


def summary(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
    }


async def measure(
    direct_url: str, gateway_url: str, calls: int, pids: dict[str, int | None], profile: Path | None
) -> dict[str, dict[str, float]]:
    auth = {"authorization": f"Bearer {KEY}"}
    session = {**auth, "x-session-id": "bench"}
    results = {
        "direct": await timed_calls(direct_url, {}, "read_file", calls, pids),
        "gateway": await timed_calls(gateway_url, auth, "files__read_file", calls, pids),
    }
    with sampled(pids["gateway"], profile):
        results["gateway_session"] = await timed_calls(gateway_url, session, "files__read_file", calls, pids)
    return results


@contextmanager
def sampled(pid: int | None, out: Path | None) -> Iterator[None]:
    """py-spy sampling the gateway while the block runs, into `out` (collapsed stacks); no `out`: nothing."""
    if out is None or pid is None:
        yield
        return
    argv = ["py-spy", "record", "--pid", str(pid), "--format", "raw", "--rate", "500", "-o", str(out)]
    sampler = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)  # py-spy attaches
        yield
    finally:
        sampler.send_signal(signal.SIGINT)  # it writes what it sampled and exits
        sampler.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--redis", default=None, help="the gateway's shared store (default: in-process)")
    parser.add_argument("--profile", type=Path, default=None, help="py-spy's collapsed stacks of the gateway")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        root = work / "root"
        root.mkdir()
        for i in range(FILES):
            (root / f"f{i}.txt").write_text(f"file {i}\n" * 20)
        tool_port, gateway_port = spawn_port(), spawn_port()
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
            pids = {"client": None, "tool_server": tools.process.pid, "gateway": gw.process.pid}
            direct_url, gateway_url = f"http://127.0.0.1:{tool_port}/mcp", f"http://127.0.0.1:{gateway_port}/mcp"
            load_before = os.getloadavg()[0]
            results = asyncio.run(measure(direct_url, gateway_url, args.calls, pids, args.profile))
    direct = results["direct"]["p50_ms"]
    overhead = {name: round(r["p50_ms"] - direct, 3) for name, r in results.items() if name != "direct"}
    ratio = {name: round(r["p50_ms"] / direct, 2) for name, r in results.items() if name != "direct"}
    report = {
        "calls": args.calls,
        "store": "redis" if args.redis else "memory",
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_1m_before": round(load_before, 2),
            "load_1m_after": round(os.getloadavg()[0], 2),
        },
        "results": results,
        "overhead_p50_ms": overhead,
        "p50_ratio_to_direct": ratio,
        "goal_p50_ms": GOAL_P50_MS,
        "met": all(value < GOAL_P50_MS for value in overhead.values()),
    }
    RESULTS.mkdir(exist_ok=True)
    suffix = "_redis" if args.redis else ""
    (RESULTS / f"mcp_overhead{suffix}.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
