"""The open-loop load generator, a process of its own: requests start on a fixed schedule (`rate` per
second for `duration` seconds) whether or not earlier ones have answered, as independent users do.

    python -m bench.production_load.generate '<json spec>'   # prints one JSON result line

Traffic is agent-like: sessions of `turns` requests (x-session-id), each turn carrying the history so
far plus a new user message; every prompt is unique (a run tag and counters), so no cache answers it.
Latency is the time to the last byte.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import uvloop

from bench.overhead.load import MARKERS, Endpoint


@dataclass(frozen=True)
class Spec(Endpoint):
    rate: float
    duration_s: float
    turns: int
    timeout_s: float


def client_headers(wire: str, key: str) -> dict[str, str]:
    """What a client of the wire sends with its key (also bench/stage_cost.py)."""
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
    if wire == "anthropic":
        headers |= {"anthropic-version": "2023-06-01", "x-api-key": key}
    return headers


def body(spec: Spec, number: int) -> bytes:
    """Request `number`: turn `number % turns` of session `number // turns`."""
    session, turn = divmod(number, spec.turns)
    history: list[dict[str, Any]] = []
    for earlier in range(turn):
        history += [
            {"role": "user", "content": f"Step {earlier} of task {spec.tag}-{session}: list the files."},
            {"role": "assistant", "content": f"Done step {earlier}: a.py, b.py, tests/test_a.py."},
        ]
    history.append({"role": "user", "content": f"Step {turn} of task {spec.tag}-{session}: what next?"})
    system = "You are a careful coding agent. Answer briefly."
    if spec.wire == "openai":
        messages = [{"role": "system", "content": system}, *history]
        return orjson.dumps({"model": spec.model, "messages": messages, "max_tokens": 64, "stream": spec.stream})
    return orjson.dumps(
        {"model": spec.model, "max_tokens": 64, "system": system, "messages": history, "stream": spec.stream}
    )


async def send(
    http: aiohttp.ClientSession,
    spec: Endpoint,
    payload: bytes,
    session_id: str,
    started: float,
    out: list[Any],
    url: str | None = None,
) -> None:
    """One request (to `url`, else the endpoint's); appends (start, latency, status) to `out` (also
    bench/production_load/agent.py)."""
    begin = time.perf_counter()
    status = "error"
    try:
        headers = {**spec.headers, "x-session-id": session_id}
        async with http.post(url or spec.url, data=payload, headers=headers) as response:
            raw = await response.read()
            ok = response.status == 200 and MARKERS[(spec.wire, spec.stream)] in raw
            status = "ok" if ok else str(response.status)
    except (aiohttp.ClientError, TimeoutError) as exc:
        status = type(exc).__name__
    out.append((round(begin - started, 4), round(time.perf_counter() - begin, 4), status))


async def run(spec: Spec) -> dict[str, Any]:
    total = int(spec.rate * spec.duration_s)
    timeout = aiohttp.ClientTimeout(total=spec.timeout_s)
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    out: list[Any] = []
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        started = time.perf_counter()
        tasks = []
        for number in range(total):
            delay = started + number / spec.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            session_id = f"load-{spec.tag}-{number // spec.turns}"
            tasks.append(asyncio.create_task(send(session, spec, body(spec, number), session_id, started, out)))
        late = time.perf_counter() - (started + (total - 1) / spec.rate)  # how far the schedule slipped
        await asyncio.gather(*tasks)
    return {"requests": total, "schedule_slip_s": round(max(late, 0.0), 3), "samples": sorted(out)}


def main() -> None:
    spec = Spec(**orjson.loads(sys.argv[1]))
    result = uvloop.run(run(spec))
    # libuv leaves stdout non-blocking: a result larger than the pipe's buffer would be cut short.
    os.set_blocking(sys.stdout.fileno(), True)
    sys.stdout.buffer.write(orjson.dumps(result) + b"\n")


if __name__ == "__main__":
    main()
