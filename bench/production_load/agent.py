"""The agent workload's generator, a process of its own: recorded agent sessions replayed turn by turn,
open loop, with their tools, in one wire format.

    python -m bench.production_load.agent '<json spec>'   # prints one JSON result line

Request k of a session carries messages[:k] for each k where the trace's next message is the
assistant's (bench/prompt_cache_replay.py `session_requests`: OpenAI chat, or Anthropic Messages with
tool_use / tool_result blocks), with `x-session-id`. Every text of every message gets the run tag, so
nothing a gateway remembers from another measurement (response cache, per-content memos) answers it.

Sessions run side by side: the requests go out in phases, phase b holding the turns of every session
that lie in the b-th of `buckets` equal parts of that session (so each session's turns stay in order and
consecutive turns of one session are a whole round of sessions apart). Within a phase requests start on
a fixed schedule (`rate` per second) whether or not earlier ones answered; after a phase the generator
waits for its answers and reads the servers' CPU time (/proc of `pids`), which gives CPU per request
against the position in the session and the history's size. The idle CPU rate measured before the run
(the gateway's paced collector) is subtracted.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import uvloop

from bench.overhead.load import Endpoint
from bench.production_load.generate import send
from bench.prompt_cache_replay import anthropic_tools, to_anthropic
from gateway.traces import assistant_turns, read_sessions

IDLE_PROBE_S = 2.0


@dataclass(frozen=True)
class Spec(Endpoint):
    rate: float
    timeout_s: float
    traces: str
    sessions: int  # 0: every session of the file
    buckets: int
    pids: list[int]
    replicas: list[str] = field(default_factory=list)  # URLs: each session's turns go to one (a hash of its id)
    parts: str = ""  # a JSON file of Anthropic-shaped `tools` and `system` sent instead of the sessions' ("": none)

    def url_for(self, session_id: str) -> str:
        return self.replicas[zlib.crc32(session_id.encode()) % len(self.replicas)] if self.replicas else self.url


@dataclass(frozen=True)
class Turn:
    session: int
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    index: int  # the turn's number in its session
    bucket: int


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of the processes (bench/overhead/servers.py `process_cpu_s`)."""
    from bench.overhead.servers import process_cpu_s

    return sum(process_cpu_s(pid) for pid in pids)


def tagged(messages: list[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    """A copy whose every text carries the tag (tool calls and ids as recorded)."""
    return [{**m, "content": f"{m['content']} [{tag}]"} if isinstance(m.get("content"), str) else m for m in messages]


def turns(spec: Spec) -> Iterator[Turn]:
    sessions = list(read_sessions(Path(spec.traces)))
    if spec.sessions:
        step = len(sessions) / min(spec.sessions, len(sessions))
        sessions = [sessions[int(i * step)] for i in range(min(spec.sessions, len(sessions)))]
    for number, session in enumerate(sessions):
        messages = tagged(session["messages"], f"{spec.tag}-{number}")
        ks = assistant_turns(messages)
        for index, k in enumerate(ks):
            yield Turn(number, messages[:k], session["tools"], index, index * spec.buckets // len(ks))


def body(spec: Spec, turn: Turn, parts: dict[str, Any] | None = None) -> bytes:
    """The turn's request; `parts` (an agent CLI's tools and system prompt, Anthropic-shaped) in place of
    the session's, as the same object on every request (the bytes of an agent resending them)."""
    if spec.wire == "openai":
        messages = turn.messages
        if parts is not None:
            rest = messages[1:] if messages and messages[0].get("role") == "system" else messages
            messages = [{"role": "system", "content": system_text(parts["system"])}, *rest]
        tools = openai_tools(parts["tools"]) if parts is not None else turn.tools
        payload: dict[str, Any] = {"messages": messages, "tools": tools}
    else:
        system, converted = to_anthropic(turn.messages)
        payload = {"system": system, "messages": converted, "tools": anthropic_tools(turn.tools)}
        if parts is not None:
            payload |= {"system": parts["system"], "tools": parts["tools"]}
    return orjson.dumps({"model": spec.model, "max_tokens": 1024, "stream": spec.stream, **payload})


def system_text(system: Any) -> str:
    """An Anthropic system prompt (a string or text blocks) as one text."""
    return system if isinstance(system, str) else "\n\n".join(block.get("text", "") for block in system)


def openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tool definitions as OpenAI Chat function tools."""
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t.get("description", ""), "parameters": t["input_schema"]},
        }
        for t in tools
        if "input_schema" in t  # Anthropic's server tools (web search) have no OpenAI form
    ]


async def phase(
    http: aiohttp.ClientSession, spec: Spec, payloads: list[tuple[str, bytes]], run_start: float, out: list[Any]
) -> float:
    """Send on schedule, wait for every answer; the seconds the schedule slipped."""
    started = time.perf_counter()
    tasks = []
    for number, (session_id, payload) in enumerate(payloads):
        delay = started + number / spec.rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        url = spec.url_for(session_id)
        tasks.append(asyncio.create_task(send(http, spec, payload, session_id, run_start, out, url)))
    late = time.perf_counter() - (started + (len(payloads) - 1) / spec.rate)
    await asyncio.gather(*tasks)
    return max(late, 0.0)


async def run(spec: Spec) -> dict[str, Any]:
    by_bucket: list[list[Turn]] = [[] for _ in range(spec.buckets)]
    for turn in turns(spec):
        by_bucket[turn.bucket].append(turn)
    before = cpu_s(spec.pids)
    await asyncio.sleep(IDLE_PROBE_S)
    idle_per_s = (cpu_s(spec.pids) - before) / IDLE_PROBE_S
    timeout = aiohttp.ClientTimeout(total=spec.timeout_s)
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    samples: list[Any] = []
    buckets: list[dict[str, Any]] = []
    parts = orjson.loads(Path(spec.parts).read_bytes()) if spec.parts else None
    slip, run_start = 0.0, time.perf_counter()
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as http:
        for bucket, members in enumerate(by_bucket):
            # Round-robin over sessions: turn i of every session before turn i+1 of any.
            members.sort(key=lambda t: (t.index, t.session))
            payloads = [(f"agent-{spec.tag}-{t.session}", body(spec, t, parts)) for t in members]
            out: list[Any] = []
            cpu, wall = cpu_s(spec.pids), time.perf_counter()
            slip = max(slip, await phase(http, spec, payloads, run_start, out))
            used = cpu_s(spec.pids) - cpu - idle_per_s * (time.perf_counter() - wall)
            samples += out
            buckets.append({
                "bucket": bucket, "requests": len(payloads),
                "cpu_ms_per_request": round(used / max(len(payloads), 1) * 1000, 3),
                "mean_messages": round(sum(len(t.messages) for t in members) / max(len(members), 1), 1),
                "mean_body_kb": round(sum(len(p) for _, p in payloads) / max(len(payloads), 1) / 1024, 1),
            })  # fmt: skip
            print(f"    part {bucket + 1}/{spec.buckets}: {buckets[-1]}", file=sys.stderr, flush=True)
    return {
        "requests": len(samples), "schedule_slip_s": round(slip, 3), "idle_cpu_ms_per_s": round(idle_per_s * 1000, 2),
        "buckets": buckets, "samples": sorted(samples),
    }  # fmt: skip


def main() -> None:
    spec = Spec(**orjson.loads(sys.argv[1]))
    result = uvloop.run(run(spec))
    os.set_blocking(sys.stdout.fileno(), True)  # libuv leaves stdout non-blocking (generate.py)
    sys.stdout.buffer.write(orjson.dumps(result) + b"\n")


if __name__ == "__main__":
    main()
