"""CPU of a request's Redis round trip: the state store's batch sent as one exchange (gateway/state/
exchange.py) against redis-py's pipeline carrying the same commands, in one run (issue 28).

    python -m bench.redis_exchange [--batches 2000] [--rounds 5] --out DIR

A private redis-server on a free loopback port (nothing else is touched). The batches are the two round
trips every session request of the default stages sends through the state store (tests/state/
test_request_batch.py counts them): the read-ahead that opens it (the guard's session state and counters,
the prompt cache's and compaction's records) and the accounting's (the session's cache totals and the
deferred writes of the guard and the prompt cache). Each in two layouts: a counter a key, as the stages
kept them before, and a session's counters as the fields of one hash (`incr_fields`, one command), as
now. Commands come from RedisStore's own op encoding, sent by exchange and, for the ratio the exchange
was first measured by, by redis-py's pipeline (hiredis parses replies on both); the layout of now also by
an exchange that takes its connection from redis-py's pool each time (as before it kept one). The sides alternate in
rounds; reported: the client's CPU per batch (process time, median over rounds) and the ratios.
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

import gateway.state.exchange as exchanges
from gateway.state.base import Op, incr_fields
from gateway.state.deadline import StallTolerantDeadline
from gateway.state.exchange import Command, exchange
from gateway.state.redis import RedisStore
from tests.deploy.processes import redis_server

TTL = 3600.0
NOW = "counters in one hash"
PRICES = {"cost": 0.001, "uncached_cost": 0.002, "premium": 0.0001}
# Per round trip, the ops as the stages sent them with a counter a key (before) and with a session's
# counters as the fields of one hash (gateway/state/base.py `incr_fields`: the prompt cache's totals,
# the guard's calls, tokens and cost).
SHAPES: dict[str, dict[str, list[Op]]] = {
    "read-ahead": {
        "a counter a key": [
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
        NOW: [
            Op("range", "guard:s:strikes"),
            Op("get", "guard:s:nudge"),
            Op("range", "guard:s:turns"),
            Op("get", "guard:s:started"),
            incr_fields("guard:s:counters", {"calls": 1, "tokens": 0, "cost": 0.0}, TTL),
            Op("get", "pc:s:state"),
            Op("get", "compaction:s:record"),
        ],
    },
    "accounting": {
        "a counter a key": [
            Op("set", "pc:s:state", ttl_s=TTL, values=(b"p" * 400,)),
            Op("incr", "guard:s:tokens", 1500, TTL),
            Op("incr_float", "guard:s:cost", 0.0012, TTL),
            Op("set", "guard:s:steps", ttl_s=TTL, values=(b"x" * 600,)),
            Op("push", "guard:s:turns", ttl_s=TTL, values=(b"t" * 80,), max_len=64),
            *(Op("incr", f"pc:totals:s:{name}", 1, TTL) for name in ("requests", "uncached", "read", "write")),
            *(Op("incr_float", f"pc:totals:s:{name}", usd, TTL) for name, usd in PRICES.items()),
        ],
        NOW: [
            Op("set", "pc:s:state", ttl_s=TTL, values=(b"p" * 400,)),
            incr_fields("guard:s:counters", {"tokens": 1500, "cost": 0.0012}, TTL),
            Op("set", "guard:s:steps", ttl_s=TTL, values=(b"x" * 600,)),
            Op("push", "guard:s:turns", ttl_s=TTL, values=(b"t" * 80,), max_len=64),
            incr_fields("pc:sums:s", {**dict.fromkeys(("requests", "uncached", "read", "write"), 1), **PRICES}, TTL),
        ],
    },
}


async def _exchanged(client: Any, timeout_s: float, commands: Sequence[Command]) -> list[Any]:
    async with StallTolerantDeadline(timeout_s):  # as the state store bounds it
        return await exchange(client, commands)


async def _through_the_pool(client: Any, timeout_s: float, commands: Sequence[Command]) -> list[Any]:
    """An exchange that takes its connection from redis-py's pool and gives it back (none kept)."""
    kept, exchanges.IDLE_KEPT = exchanges.IDLE_KEPT, 0
    try:
        return await _exchanged(client, timeout_s, commands)
    finally:
        exchanges.IDLE_KEPT = kept


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
    for trip, layouts in SHAPES.items():
        encoded: dict[str, list[Command]] = {}
        for layout, ops in layouts.items():
            commands: list[Command] = []
            encoded[layout] = commands
            for op in ops:
                store.encode(commands, op)
        sides: dict[str, Callable[[], Awaitable[Any]]] = {
            f"{layout}, {how}": partial(send, commands)
            for layout, commands in encoded.items()
            for how, send in (
                ("redis-py pipeline", pipelined),
                ("exchange", partial(_exchanged, client, store.timeout_s)),
            )
        }
        sides[f"{NOW}, exchange through the pool"] = partial(_through_the_pool, client, store.timeout_s, encoded[NOW])
        for send in sides.values():  # warm: connections, both code paths
            await cpu_per_batch(send, 200)
        taken: dict[str, list[float]] = {side: [] for side in sides}
        for number in range(rounds):
            for side, send in sides.items():
                taken[side].append(await cpu_per_batch(send, batches))
            latest = ", ".join(f"{side} {values[-1]:.1f} us" for side, values in taken.items())
            print(f"  {trip} round {number + 1}/{rounds}: {latest}", file=sys.stderr, flush=True)
        medians = {side: round(statistics.median(values), 1) for side, values in taken.items()}
        before, after = (f"{layout}, exchange" for layout in layouts)
        results[trip] = {
            "ops": {layout: len(ops) for layout, ops in layouts.items()},
            "commands": {layout: len(commands) for layout, commands in encoded.items()},
            "cpu_us_per_batch": medians,
            "exchange_over_pipeline": {
                layout: round(medians[f"{layout}, exchange"] / medians[f"{layout}, redis-py pipeline"], 3)
                for layout in layouts
            },
            "one_hash_over_a_key_each": round(medians[after] / medians[before], 3),
            "kept_connection_over_the_pool": round(medians[after] / medians[f"{NOW}, exchange through the pool"], 3),
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
    for trip, found in results.items():
        print(f"{trip}: {found['cpu_us_per_batch']}; exchange / pipeline {found['exchange_over_pipeline']}; "
              f"one hash / a key each x{found['one_hash_over_a_key_each']}; "
              f"kept connection / the pool's x{found['kept_connection_over_the_pool']}")  # fmt: skip


if __name__ == "__main__":
    main()
