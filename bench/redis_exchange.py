"""CPU of a request's Redis round trip: the state store's batch sent as one exchange (gateway/state/
exchange.py) against redis-py's pipeline carrying the same commands, in one run (issue 28).

    python -m bench.redis_exchange [--batches 2000] [--rounds 5] --out DIR

A private redis-server on a free loopback port (nothing else is touched). The batches are the two shapes
every session request of the default stages sends through the state store (tests/state/test_request_batch.py
counts its round trips): the read-ahead that opens it (the guard's session state and counters, the prompt
cache's and compaction's records: 9 ops, 11 commands) and the accounting's round trip (the session's
cache totals and the guard's deferred writes: 6 ops). Commands come from RedisStore's own op encoding;
both sides use one client (hiredis parses replies on both). The sides alternate in rounds; reported:
the client's CPU per batch (process time, median over rounds) and its ratio to the pipeline's.
Output: DIR/redis_exchange.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import uvloop

from gateway.state.base import Op
from gateway.state.exchange import Command, exchange
from gateway.state.redis import RedisStore
from tests.deploy.processes import redis_server

TTL = 3600.0
SHAPES: dict[str, list[Op]] = {
    "read-ahead (9 ops)": [
        Op("range", "guard:s:strikes"),
        Op("get", "guard:s:nudge"),
        Op("range", "guard:s:turns"),
        Op("get", "guard:s:started"),
        Op("incr", "guard:s:calls", 1),
        Op("incr", "guard:s:tokens", 0, TTL),
        Op("incr_float", "guard:s:cost", 0.0, TTL),
        Op("get", "pc:s:state"),
        Op("get", "compaction:s:record"),
    ],
    "accounting (6 ops)": [
        Op("incr", "pc:s:read", 1200, TTL),
        Op("incr", "pc:s:write", 300, TTL),
        Op("incr_float", "pc:s:saved", 0.0012, TTL),
        Op("set", "guard:s:steps", ttl_s=TTL, values=(b"x" * 600,)),
        Op("push", "guard:s:turns", ttl_s=TTL, values=(b"t" * 80,), max_len=64),
        Op("incr", "guard:s:tokens", 1500, TTL),
    ],
}


async def cpu_per_batch(send: Callable[[], Awaitable[Any]], batches: int) -> float:
    started = time.process_time()
    for _ in range(batches):
        await send()
    return (time.process_time() - started) / batches * 1e6


async def measure(url: str, batches: int, rounds: int) -> dict[str, Any]:
    store = RedisStore(url, prefix="bench-exchange:")
    client = store.client

    async def pipelined(commands: Sequence[Command]) -> list[Any]:
        async with client.pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute())

    results: dict[str, Any] = {}
    for shape, ops in SHAPES.items():
        commands: list[Command] = []
        for op in ops:
            store.encode(commands, op)
        sides: dict[str, Callable[[], Awaitable[Any]]] = {
            "redis-py pipeline": partial(pipelined, commands),
            "exchange": partial(exchange, client, commands, store.timeout_s),
        }
        for send in sides.values():  # warm: connections, both code paths
            await cpu_per_batch(send, 200)
        taken: dict[str, list[float]] = {side: [] for side in sides}
        for number in range(rounds):
            for side, send in sides.items():
                taken[side].append(await cpu_per_batch(send, batches))
            latest = ", ".join(f"{side} {values[-1]:.1f} us" for side, values in taken.items())
            print(f"  {shape} round {number + 1}/{rounds}: {latest}", file=sys.stderr, flush=True)
        medians = {side: round(statistics.median(values), 1) for side, values in taken.items()}
        results[shape] = {
            "commands": len(commands),
            "cpu_us_per_batch": medians,
            "exchange_over_pipeline": round(medians["exchange"] / medians["redis-py pipeline"], 3),
            "rounds": {side: [round(v, 1) for v in values] for side, values in taken.items()},
        }
    await store.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=2000, help="batches per side and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, required=True, help="folder for redis_exchange.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as logs, redis_server(Path(logs)) as (_, url):
        results = uvloop.run(measure(url, args.batches, args.rounds))
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"command": " ".join(sys.argv), "batches": args.batches, "rounds": args.rounds, "results": results}
    (args.out / "redis_exchange.json").write_text(json.dumps(report, indent=2) + "\n")
    for shape, found in results.items():
        print(f"{shape}: {found['cpu_us_per_batch']} -> x{found['exchange_over_pipeline']}")


if __name__ == "__main__":
    main()
