"""What each stage costs a request of a recorded agent session: CPU time, and optionally instructions.

    python -m bench.stage_cost --out DIR [--traces FILE] [--sessions 10] [--parts FILE]
        [--wires openai anthropic] [--instructions] [--workload agent|synthetic]

One gateway process per configuration (every default stage; the optional stages off) and wire, each
serving the sessions' requests one after the other in-process (create_app called as an ASGI server would,
the collector paced as in `gateway serve`) against bench.overhead.upstream with no delay. The requests
are bench/production_load's agent workload (bench/production_load/agent.py: a fifth of every session's
turns at a time, as its phases, turn by turn and round robin over the sessions within one; `--parts`: an
agent CLI's tools and system prompt in place of the sessions'). `--workload synthetic`: its synthetic
workload instead, `--sessions` sessions of 4 one-line turns (the part of a stage's cost that is there
whatever the history holds).

Sequential requests make a stage's thread CPU time its own: each stage hook's is summed, per request and
per fifth of the sessions' turns. That is still a clock, noisy on a shared machine. `--instructions` runs
each process under valgrind's callgrind as well, instrumented only while the requests are served
(valgrind's client requests): instructions executed per request, the same count on every run of the same code
and data whatever else the machine does, so a change of a few percent is resolved where the clock
cannot (instructions are not time: they leave out cache misses and the upstream's process; the garbage
collector runs on CPython's allocation counts there, not paced by the clock). Its counts are dumped at
each fifth's end, so instructions a request are reported per fifth too: how a configuration's cost grows
with the history, free of the clock's noise. Output: DIR/stage_cost.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench.overhead.run import PATHS
from bench.overhead.servers import TENANT_KEY, free_port, gateway_config
from bench.production_load import generate as synthetic
from bench.production_load.agent import Spec, body, turns
from bench.production_load.generate import client_headers
from gateway.traces import default_traces

CONFIGS = {"default stages": False, "optional stages off": True}  # name -> core only
PARTS = 5
SYNTHETIC_TURNS = 4  # as bench/production_load's synthetic workload
WARMUP = 5  # requests of sessions of their own, before measuring (imports, first-use caches)


def synthetic_requests(wire: str, sessions: int) -> list[tuple[str, bytes, int]]:
    """The production-load bench's synthetic workload: `sessions` sessions of SYNTHETIC_TURNS one-line
    turns, in order (one part: what a stage costs a request whatever the history holds)."""
    spec = synthetic.Spec(
        url="", wire=wire, model=f"{wire}-lean", stream=wire == "anthropic", headers={}, tag=f"sc{time.time_ns()}",
        rate=1.0, duration_s=1.0, turns=SYNTHETIC_TURNS, timeout_s=30.0,
    )  # fmt: skip
    count = sessions * SYNTHETIC_TURNS
    return [(f"{spec.tag}-{n // SYNTHETIC_TURNS}", synthetic.body(spec, n), 0) for n in range(count)]


def requests(wire: str, traces: str, sessions: int, parts: str) -> list[tuple[str, bytes, int]]:
    """(session id, body, fifth of its session) per request, in the agent workload's order."""
    spec = Spec(
        url="", wire=wire, model=f"{wire}-lean", stream=wire == "anthropic", headers={}, tag=f"sc{time.time_ns()}",
        rate=1.0, timeout_s=30.0, traces=traces, sessions=sessions, buckets=PARTS, pids=[], parts=parts,
    )  # fmt: skip
    given = json.loads(Path(parts).read_text()) if parts else None
    ordered = sorted(turns(spec), key=lambda t: (t.bucket, t.index, t.session))  # a session's turns in order
    return [(f"{spec.tag}-{t.session}", body(spec, t, given), t.bucket) for t in ordered]


def _timed(hook: Callable[[Any], Awaitable[None]], name: str, spent: dict[str, float]) -> Callable[[Any], Any]:
    async def timed(ctx: Any) -> None:
        started = time.thread_time()
        try:
            await hook(ctx)
        finally:
            spent[name] += time.thread_time() - started

    return timed


# Valgrind's client requests (its header's macros: machine code, so a small library), no-ops outside it.
TOGGLE_C = """#include <valgrind/callgrind.h>
void instrument_on(void) { CALLGRIND_START_INSTRUMENTATION; }
void instrument_off(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void dump_counts(void) { CALLGRIND_DUMP_STATS; }
"""


def toggle_library(workdir: Path) -> Path:
    source, library = workdir / "toggle.c", workdir / "toggle.so"
    source.write_text(TOGGLE_C)
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def _callgrind(on: bool) -> None:
    """Instructions counted from here (`on`) until here (off): the requests only, not startup."""
    library = os.environ.get("STAGE_COST_TOGGLE")
    if library:
        toggle = ctypes.CDLL(library)
        (toggle.instrument_on if on else toggle.instrument_off)()


def _callgrind_dump() -> None:
    """The counts since the last dump written to a file of their own (OUT.1, OUT.2, ...; the last one's at
    exit goes to OUT), and counting goes on from zero."""
    library = os.environ.get("STAGE_COST_TOGGLE")
    if library:
        ctypes.CDLL(library).dump_counts()


async def asgi_post(app: Any, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
    """POST `body` to the ASGI app as a server would hand it over: the response's status and body. A client
    of its own (httpx's ASGI transport parses every response header and offers them to its cookie jar)
    would count its per-header work with the gateway's, and the default stages send more headers."""
    sent = [("host", "gateway"), ("content-length", str(len(body))), *headers.items()]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
        "headers": [(name.lower().encode(), value.encode()) for name, value in sent],
        "client": ("127.0.0.1", 50000), "server": ("gateway", 80),
    }  # fmt: skip
    complete, asked = asyncio.Event(), False
    status, chunks = 0, []

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": body, "more_body": False}
        await complete.wait()  # the client stays until the answer is whole, as httpx's transport does
        return {"type": "http.disconnect"}

    async def reply(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                complete.set()

    await app(scope, receive, reply)
    complete.set()
    return status, b"".join(chunks)


async def serve(config: Path, wire: str, work: list[tuple[str, bytes, int]]) -> dict[str, Any]:
    """The child's measurement: the requests through one gateway, in this process."""
    from gateway import collector
    from gateway.app import create_app
    from gateway.config.settings import load_settings

    app = create_app(load_settings(config))
    if not os.environ.get("STAGE_COST_TOGGLE"):
        # Under callgrind the clock runs ~50x slower a instruction: the paced collector would run that
        # much more often a request; CPython's own (by allocations) keeps the count the code's.
        collector.take_over(app)
    spent: dict[str, float] = defaultdict(float)
    pipeline = app.state.services.pipeline
    for side, stages in (("request", pipeline.request_stages), ("response", pipeline.response_stages)):
        for stage in stages:
            hook = "on_request" if side == "request" else "on_response"
            setattr(stage, hook, _timed(getattr(stage, hook), f"{stage.name}.{side}", spent))
    parts: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    async with app.router.lifespan_context(app):

        async def send(session: str, payload: bytes) -> None:
            headers = {**client_headers(wire, TENANT_KEY), "x-session-id": session}
            status, answer = await asgi_post(app, PATHS[wire], headers, payload)
            if status != 200:
                raise RuntimeError(f"{status}: {answer[:300]!r}")

        for session, payload, _ in work[:WARMUP]:
            await send(f"warmup-{session}", payload)
        spent.clear()
        _callgrind(True)
        started = time.thread_time()
        for number, (session, payload, part) in enumerate(work):
            if number and part != work[number - 1][2]:
                _callgrind_dump()
            before = time.thread_time()
            await send(session, payload)
            parts[part][0] += time.thread_time() - before
            parts[part][1] += 1
        total = time.thread_time() - started
        _callgrind(False)
    count = len(work)
    stages = sorted(spent.items(), key=lambda kv: -kv[1])
    return {
        "requests": count,
        "cpu_ms_per_request": round(total / count * 1000, 3),
        "cpu_ms_by_fifth": [round(parts[p][0] / parts[p][1] * 1000, 3) for p in sorted(parts)],
        "requests_by_fifth": [int(parts[p][1]) for p in sorted(parts)],
        "stages_ms_per_request": {name: round(s / count * 1000, 3) for name, s in stages},
    }


def _instructions(out_file: Path) -> int:
    """The total instructions callgrind counted (its `totals:` line; `summary:` is written before the
    counts and may say 0)."""
    found = re.findall(r"^totals:\s+(\d+)", out_file.read_text(errors="replace"), re.MULTILINE)
    if not found:
        raise RuntimeError(f"no instruction count in {out_file}")
    return int(found[-1])


def _run(child: list[str], env: dict[str, str], what: str) -> dict[str, Any]:
    done = subprocess.run(child, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(args: argparse.Namespace, config_name: str, wire: str, upstream: str, workdir: Path) -> dict[str, Any]:
    """A child process's measurement; with `--instructions`, a second child's count under callgrind (its
    clock runs tens of times slower: the CPU times are the first one's)."""
    config = workdir / f"{wire}-{CONFIGS[config_name]}.yaml"
    config.write_text(yaml.safe_dump(gateway_config(upstream, 0, CONFIGS[config_name])))
    child = [sys.executable, "-m", "bench.stage_cost", "--child", str(config), wire, str(args.traces),
             str(args.sessions), str(args.parts or ""), args.workload]  # fmt: skip
    what = f"{config_name} / {wire}"
    result = {"config": config_name, "wire": wire, **_run(child, dict(os.environ), what)}
    if args.instructions:
        out_file = workdir / f"callgrind-{wire}-{CONFIGS[config_name]}.out"
        env = {**os.environ, "PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"}
        env["STAGE_COST_TOGGLE"] = str(toggle_library(workdir))
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out_file}"]
        counted = _run([*valgrind, *child], env, f"{what} under callgrind")
        # One file a fifth, in the order they ran (the work is ordered by fifth): OUT.1, ..., then OUT.
        dumps = sorted(workdir.glob(f"{out_file.name}.*"), key=lambda path: int(path.suffix[1:]))
        by_fifth = [_instructions(path) for path in [*dumps, out_file]]
        requests = counted["requests_by_fifth"]
        if len(by_fifth) != len(requests):
            raise RuntimeError(f"{what}: {len(by_fifth)} count dumps for {len(requests)} fifths")
        result["instructions_per_request"] = sum(by_fifth) // counted["requests"]
        result["instructions_by_fifth"] = [count // n for count, n in zip(by_fifth, requests, strict=True)]
    return result


def report(rows: list[dict[str, Any]]) -> None:
    for wire in sorted({r["wire"] for r in rows}):
        found = {r["config"]: r for r in rows if r["wire"] == wire}
        default, off = found["default stages"], found["optional stages off"]
        line = f"{wire}: CPU ms a request {default['cpu_ms_per_request']} / {off['cpu_ms_per_request']} (default / off)"
        line += f", default over off +{default['cpu_ms_per_request'] - off['cpu_ms_per_request']:.3f} ms"
        if "instructions_per_request" in default:
            ratio = default["instructions_per_request"] / off["instructions_per_request"]
            line += f"; instructions {default['instructions_per_request']:,} / {off['instructions_per_request']:,}"
            line += f" ({ratio:.3f}x)"
        print(line)
        if "instructions_by_fifth" in default:
            excess = [
                d - o for d, o in zip(default["instructions_by_fifth"], off["instructions_by_fifth"], strict=True)
            ]
            print(f"    instructions a request by fifth, default over off: {', '.join(f'{e:+,}' for e in excess)}")
        for stage, ms in default["stages_ms_per_request"].items():
            if ms >= 0.01:
                print(f"    {stage:34s} {ms:7.3f} ms   (stages off: {off['stages_ms_per_request'].get(stage, 0):.3f})")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        config, wire, traces, sessions, parts, workload = sys.argv[2:8]
        if workload == "synthetic":
            work = synthetic_requests(wire, int(sessions))
        else:
            work = requests(wire, traces, int(sessions), parts)
        result = asyncio.run(serve(Path(config), wire, work))
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=Path, default=default_traces(), help="agent sessions (JSONL, .gz or not)")
    parser.add_argument("--sessions", type=int, default=10, help="N sessions spread over the file (synthetic: made)")
    parser.add_argument(
        "--workload", choices=("agent", "synthetic"), default="agent", help="synthetic: sessions of 4 one-line turns"
    )
    parser.add_argument("--parts", type=Path, help="tools and system prompt (bench.production_load.capture)")
    parser.add_argument("--wires", nargs="+", choices=tuple(PATHS), default=list(PATHS))
    parser.add_argument("--instructions", action="store_true", help="also count instructions (callgrind, slow)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    upstream = subprocess.Popen(
        [sys.executable, "-m", "bench.overhead.upstream", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rows = []
    try:
        httpx_wait(f"http://127.0.0.1:{port}/health")
        with tempfile.TemporaryDirectory() as workdir:
            for wire in args.wires:
                for config_name in CONFIGS:
                    print(f"  {wire}, {config_name} ...", flush=True)
                    rows.append(measure(args, config_name, wire, f"http://127.0.0.1:{port}", Path(workdir)))
    finally:
        upstream.terminate()
        upstream.wait()
    (args.out / "stage_cost.json").write_text(json.dumps(rows, indent=1))
    report(rows)


def httpx_wait(url: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(url).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer")
        time.sleep(0.2)


if __name__ == "__main__":
    main()
