"""The load generator, a process of its own: warm-up, a sequential latency phase, a concurrent throughput phase.

    python -m bench.overhead.load '<json spec>'   # prints one JSON result line

Each request is unique (a run tag and a counter in the user turn), so no cache in front answers it.
Latency is the time to the last byte (streams: also to the first body byte). Loopback only.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
import uvloop

MARKERS = {
    ("openai", False): b"bench upstream",
    ("openai", True): b"[DONE]",
    ("anthropic", False): b"bench upstream",
    ("anthropic", True): b"message_stop",
}


@dataclass(frozen=True)
class Endpoint:
    """Where and what a load generator sends (also bench/production_load/generate.py)."""

    url: str
    wire: str
    model: str
    stream: bool
    headers: dict[str, str]
    tag: str


@dataclass(frozen=True)
class Spec(Endpoint):
    warmup: int
    sequential: int
    count: int
    concurrency: int
    deadline_s: float

    @classmethod
    def parse(cls, text: str) -> Spec:
        return cls(**orjson.loads(text))


def body(spec: Spec, index: int) -> bytes:
    turn = f"Say hello to request {spec.tag}-{index}."
    if spec.wire == "openai":
        messages = [{"role": "system", "content": "You are a terse assistant."}, {"role": "user", "content": turn}]
        return orjson.dumps({"model": spec.model, "messages": messages, "max_tokens": 64, "stream": spec.stream})
    return orjson.dumps(
        {
            "model": spec.model,
            "max_tokens": 64,
            "system": "You are a terse assistant.",
            "messages": [{"role": "user", "content": turn}],
            "stream": spec.stream,
        }
    )


@dataclass
class Phase:
    latencies: list[float] = field(default_factory=list)
    first_bytes: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str | None = None
    wall_s: float = 0.0


async def one(session: aiohttp.ClientSession, spec: Spec, index: int, phase: Phase, worker: int) -> None:
    headers = {**spec.headers, "x-session-id": f"bench-{spec.tag}-{worker}"}
    started = time.perf_counter()
    first: float | None = None
    try:
        async with session.post(spec.url, data=body(spec, index), headers=headers) as response:
            chunks = []
            async for chunk in response.content.iter_any():
                first = first or time.perf_counter()
                chunks.append(chunk)
            raw = b"".join(chunks)
            ok = response.status == 200 and MARKERS[(spec.wire, spec.stream)] in raw
            problem = f"HTTP {response.status}: {raw[:300]!r}"
    except (aiohttp.ClientError, TimeoutError) as exc:
        ok, problem = False, f"{type(exc).__name__}: {exc}"
    ended = time.perf_counter()
    if not ok:
        phase.errors += 1
        phase.first_error = phase.first_error or problem
        return
    phase.latencies.append(ended - started)
    if spec.stream and first is not None:
        phase.first_bytes.append(first - started)


async def drive(session: aiohttp.ClientSession, spec: Spec, start: int, count: int, concurrency: int) -> Phase:
    phase, next_index, stop_at = Phase(), start, time.monotonic() + spec.deadline_s

    async def worker(number: int) -> None:
        nonlocal next_index
        while next_index < start + count and time.monotonic() < stop_at:
            index, next_index = next_index, next_index + 1
            await one(session, spec, index, phase, number)

    began = time.perf_counter()
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    phase.wall_s = time.perf_counter() - began
    return phase


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000 if ordered else float("nan")


def summary(phase: Phase) -> dict[str, Any]:
    done = len(phase.latencies)
    return {
        "requests": done,
        "errors": phase.errors,
        "first_error": phase.first_error,
        "wall_s": round(phase.wall_s, 3),
        "rps": round(done / phase.wall_s, 1) if phase.wall_s else 0.0,
        "p50_ms": round(percentile(phase.latencies, 0.5), 3),
        "p99_ms": round(percentile(phase.latencies, 0.99), 3),
        "mean_ms": round(statistics.fmean(phase.latencies) * 1000, 3) if done else float("nan"),
        "ttfb_p50_ms": round(percentile(phase.first_bytes, 0.5), 3) if phase.first_bytes else None,
    }


async def run(spec: Spec) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(limit=spec.concurrency, force_close=False)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        warm = await drive(session, spec, 0, spec.warmup, spec.concurrency)
        sequential = await drive(session, spec, spec.warmup, spec.sequential, 1)
        loaded = await drive(session, spec, spec.warmup + spec.sequential, spec.count, spec.concurrency)
    return {
        "warmup_errors": warm.errors,
        "warmup_error": warm.first_error,
        "sequential": summary(sequential),
        "concurrent": summary(loaded),
    }


def main() -> None:
    result = uvloop.run(run(Spec.parse(sys.argv[1])))
    sys.stdout.write(orjson.dumps(result).decode() + "\n")


if __name__ == "__main__":
    main()
