"""A request's state operations travel together (gateway/state/request.py): reads its stages declare ahead
go with its first batch, deferred writes with its next one. Round trips are counted on the wire, by a TCP
proxy between the gateway and a private redis-server; results are the shared store's own, on every backend."""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import hiredis
import httpx
import pytest

from gateway.state import MemoryStore, RedisStore, ResilientStore, StateStore
from gateway.state.base import Op
from gateway.state.request import RequestStore
from tests.deploy.processes import redis_cluster, redis_server
from tests.gateway_harness import TENANT_KEYS, running_gateway

# A session request's commands with every default stage on (22 on both wires when this was written; 38
# while a session's counters were a key each, stepped with their TTL: two commands a counter).
COMMANDS_PER_REQUEST = 24


class WireCount:
    """What clients wrote to Redis through the proxy: one chunk per round trip (a pipeline is one write)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def trips(self, marker: bytes) -> int:
        """Round trips that name `marker` (a tenant's name: every key of a request's state carries it)."""
        return sum(marker in chunk for chunk in self.chunks)

    def commands(self, marker: bytes) -> int:
        """Commands in those round trips (each a RESP array; a chunk holds whole commands: one write each)."""
        total = 0
        for chunk in (chunk for chunk in self.chunks if marker in chunk):
            reader = hiredis.Reader()
            reader.feed(chunk)
            while reader.gets() is not False:
                total += 1
        return total


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: list[bytes] | None) -> None:
    try:
        while data := await reader.read(1 << 20):
            if seen is not None:
                seen.append(data)
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


@contextmanager
def counting_redis() -> Iterator[tuple[str, WireCount]]:
    """A private redis-server behind a counting TCP proxy (a thread with its own loop); the proxy's URL."""
    count, ready, ports = WireCount(), threading.Event(), []
    loop, stop = asyncio.new_event_loop(), asyncio.Event()
    with tempfile.TemporaryDirectory() as logs, redis_server(Path(logs)) as (_, url):
        port = int(url.rsplit(":", 1)[1].split("/")[0])

        async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", port)
            await asyncio.gather(_relay(client_r, server_w, count.chunks), _relay(server_r, client_w, None))

        async def serve() -> None:
            server = await asyncio.start_server(handle, "127.0.0.1", 0)
            ports.append(server.sockets[0].getsockname()[1])
            ready.set()
            async with server:
                await stop.wait()
            # Connections still open end here, not in a finalizer at some later garbage collection.
            relays = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in relays:
                task.cancel()
            await asyncio.gather(*relays, return_exceptions=True)

        thread = threading.Thread(target=lambda: loop.run_until_complete(serve()), daemon=True)
        thread.start()
        ready.wait(timeout=10)
        try:
            yield f"redis://127.0.0.1:{ports[0]}/0", count
        finally:
            loop.call_soon_threadsafe(stop.set)
            thread.join(timeout=5)


@pytest.fixture(scope="module")
def cluster_url() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as logs, redis_cluster(Path(logs)) as url:
        yield url


@pytest.fixture(params=["memory", "redis", "cluster"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[StateStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    if request.param == "cluster":
        shared = RedisStore(request.getfixturevalue("cluster_url"), prefix=f"t{uuid.uuid4().hex[:8]}:")
        yield shared
        await shared.close()
        return
    with counting_redis() as (url, _):
        shared = RedisStore(url, prefix="t:")
        yield shared
        await shared.close()


async def test_results_are_the_stores_own(store: StateStore) -> None:
    """Reads declared ahead, deferred writes and plain calls answer as the shared store would, on every
    backend (a cluster's keys of one batch lie in different slots)."""
    await store.batch([Op("set", "a", values=(b"1",)), Op("push", "l", values=(b"x", b"y"))])
    view = RequestStore(store)
    view.expect([Op("get", "a"), Op("range", "l"), Op("get", "missing")])
    assert await view.batch([Op("incr", "n", 2, 60.0), Op("get", "a")]) == [2, b"1"]
    assert await view.range("l") == [b"x", b"y"]  # answered ahead
    assert await view.get("missing") is None
    view.defer([Op("set", "a", ttl_s=60.0, values=(b"2",)), Op("push", "l", values=(b"z",), max_len=2)])
    assert await store.get("a") == b"1"  # not sent yet
    assert await view.get("a") == b"2"  # the deferred write goes first in the same batch
    view.defer([Op("incr_float", "f", 1.5)])
    await view.flush()
    assert await store.range("l") == [b"y", b"z"]
    assert await store.incr_float("f", 0.0) == 1.5
    assert await view.set("b", b"3", only_new=True) and not await view.set("b", b"4", only_new=True)


async def test_a_write_makes_a_read_ahead_stale() -> None:
    store = MemoryStore()
    await store.set("k", b"old")
    view = RequestStore(store)
    view.expect([Op("get", "k")])
    await view.batch([])  # the read goes out ahead
    await view.set("k", b"new")
    assert await view.get("k") == b"new"


async def test_declared_reads_and_deferred_writes_take_one_round_trip() -> None:
    with counting_redis() as (url, count):
        shared = RedisStore(url, prefix="t:")
        await shared.ping()
        view = RequestStore(shared)
        view.defer([Op("set", "t-w", values=(b"1",))])
        view.expect([Op("get", "t-a"), Op("range", "t-l")])
        before = count.trips(b"t-")
        await view.batch([Op("incr", "t-n", 1)])
        assert await view.get("t-a") is None and await view.range("t-l") == []
        assert count.trips(b"t-") - before == 1
        await shared.close()


async def test_fallback_answers_the_batch_when_redis_is_gone() -> None:
    """Redis down: the combined batch falls back to the replica's memory like each op would."""
    fallbacks: list[str] = []
    store = ResilientStore(RedisStore("redis://127.0.0.1:1/0", timeout_s=0.05), fallbacks.append)
    view = RequestStore(store)
    view.expect([Op("get", "a")])
    view.defer([Op("set", "a", values=(b"1",))])
    assert await view.batch([Op("incr", "n", 1)]) == [1]
    assert await view.get("a") == b"1" and fallbacks == ["batch"]


def _agent_turns(wire: str, tag: str) -> list[list[dict[str, object]]]:
    """Three turns of an agent session with tool calls and results, in the wire's own shape."""
    call = f"call_{tag}"
    if wire == "openai":
        history: list[dict[str, object]] = [
            {"role": "system", "content": "You fix bugs in the repository."},
            {"role": "user", "content": f"Fix the failing test {tag}."},
        ]
        tool_call = {"id": call, "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}
        step: list[dict[str, object]] = [
            {"role": "assistant", "content": None, "tool_calls": [tool_call]},
            {"role": "tool", "tool_call_id": call, "content": "setup.py\nsrc\ntests\n" * 20},
        ]
    else:
        history = [{"role": "user", "content": f"Fix the failing test {tag}."}]
        step = [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call, "name": "bash", "input": {"cmd": "ls"}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call, "content": "setup.py\nsrc\n" * 20}],
            },
        ]
    turns: list[list[dict[str, object]]] = []
    for _ in range(3):
        turns.append(list(history))
        history = [*history, *step]
    return turns


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_streamed_agent_request_costs_few_round_trips(wire: str) -> None:
    """Through the real server on Redis, every default stage on: the request's state (guard session, prompt
    cache line, response cache, request log) costs at most 3 round trips: the read-ahead, the accounting's,
    the request log's (12 before reads were declared ahead, the prompt cache's write deferred and the
    request log batched; 9 before the response cache's lookup took its flight lock and its store released
    it, gateway/response_cache/coalesce.py; 6 before the guard's session writes rode the prompt-cache
    accounting's trip; 5 before the response cache's store rode it too; 4 before its lookup rode the
    read-ahead)."""
    tools = {"openai": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}],
             "anthropic": [{"name": "bash", "input_schema": {"type": "object"}}]}[wire]  # fmt: skip
    model, path = {
        "openai": ("gpt-4o-mini", "/v1/chat/completions"),
        "anthropic": ("claude-sonnet-4-5", "/v1/messages"),
    }[wire]
    tag = uuid.uuid4().hex[:8]
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-api-key": TENANT_KEYS["acme"],
               "anthropic-version": "2023-06-01", "x-session-id": f"s-{tag}"}  # fmt: skip
    trips, commands = [], []
    with (
        counting_redis() as (url, count),
        running_gateway(redis_url=url) as gw,
        httpx.Client(base_url=gw.url, headers=headers, timeout=30) as http,
    ):
        for messages in _agent_turns(wire, tag):
            before, sent = count.trips(b"acme"), count.commands(b"acme")
            body = {"model": model, "max_tokens": 256, "stream": True, "messages": messages, "tools": tools}
            with http.stream("POST", path, json=body) as answer:
                assert answer.status_code == 200, answer.read()
                for _ in answer.iter_bytes():
                    pass
            time.sleep(0.5)  # the request's end and the request log's writer
            trips.append(count.trips(b"acme") - before)
            commands.append(count.commands(b"acme") - sent)
    # the session's first request also starts its counters and loads the response cache's script
    assert max(trips[1:]) <= 3, trips
    # A session's counters are the fields of one hash, stepped in one command (the prompt cache's totals
    # and the guard's calls, tokens and cost).
    assert max(commands[1:]) <= COMMANDS_PER_REQUEST, commands


def test_records_of_requests_close_together_share_a_round_trip() -> None:
    """The request log's writer waits `batch_linger_s` on Redis before it writes: requests that end within
    that wait cost one round trip for all their records (each was one of its own)."""
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    log_key = b"requests:{acme}:log"
    with (
        counting_redis() as (url, count),
        running_gateway(redis_url=url, request_log={"batch_linger_s": 1.0}) as gw,
        httpx.Client(base_url=gw.url, headers=headers, timeout=30) as http,
    ):
        ids = []
        for turn in range(5):
            body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"[[sim:text record {turn}]]"}]}
            answer = http.post("/v1/chat/completions", json=body)
            assert answer.status_code == 200, answer.text
            ids.append(answer.headers["x-request-id"])
        deadline = time.monotonic() + 10
        while http.get(f"/v1/requests/{ids[-1]}").status_code == 404 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(http.get(f"/v1/requests/{request_id}").status_code == 200 for request_id in ids)
        assert count.trips(log_key) <= 2, count.trips(log_key)  # 5 written as they came (one if all end in 1 s)
