"""One write of Redis commands (gateway/state/exchange.py, issue 28): packed as redis-py packs them, a
connection that met an error reply or a timeout never answers its next user with a stale reply, and one
that answered everything is kept for the next exchange."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

import gateway.state.exchange as exchanges
from gateway.state.clients import redis_client
from gateway.state.deadline import StallTolerantDeadline
from gateway.state.resp import Arg, packed
from tests.gateway_harness import REDIS_TEST_URL
from tests.redis_target import cluster_target

COMMANDS: list[tuple[Arg, ...]] = [
    ("GET", "cg:plain"),
    ("SET", "cg:ünïcode ✓", b"\x00\xffbytes\r\n", "PX", 60_000),
    ("INCRBY", "cg:n", -7),
    ("INCRBYFLOAT", "cg:f", 0.1),
    ("INCRBYFLOAT", "cg:f", 1e-7),
    ("RPUSH", "cg:l", b"x" * 70_000, "y"),  # past redis-py's 6,000-byte chunking
    ("LRANGE", "cg:l", 0, -1),
]


def test_commands_are_packed_as_redis_py_packs_them() -> None:
    connection = aioredis.Connection()
    assert packed(COMMANDS) == b"".join(bytes(chunk) for chunk in connection.pack_commands(COMMANDS))


def test_a_bool_is_refused_as_redis_py_refuses_it() -> None:
    with pytest.raises(TypeError):
        packed([("SET", "k", True)])


async def exchange(client: aioredis.Redis, commands: list[tuple[Arg, ...]], timeout_s: float) -> list[object]:
    """An exchange under the deadline its callers in the gateway give it."""
    async with StallTolerantDeadline(timeout_s):
        return await exchanges.exchange(client, commands)


@pytest.fixture
async def client() -> aioredis.Redis:
    if cluster_target():
        pytest.skip("on a Redis Cluster the exchange is redis-py's pipeline")
    return redis_client(REDIS_TEST_URL, 0.25)


async def test_replies_come_back_raw_and_in_order(client: aioredis.Redis) -> None:
    # A caller's session id in a key cannot add a command: every argument is length-prefixed.
    key = f"test-exchange:{uuid.uuid4().hex}:\r\n*1\r\n$8\r\nFLUSHALL\r\n"
    try:
        commands: list[tuple[Arg, ...]] = [("SET", key, b"v", "PX", 60_000), ("GET", key)]
        commands += [("INCRBYFLOAT", key + ":f", 1.5), ("LRANGE", key + ":l", 0, -1)]
        replies = await exchange(client, commands, 0.25)
        assert replies == [b"OK", b"v", b"1.5", []]
        assert await client.get(key) == b"v"  # and nothing was flushed
    finally:
        await client.delete(key, key + ":f")
        await client.aclose()


async def test_an_error_reply_raises_and_the_next_exchange_reads_its_own_replies(client: aioredis.Redis) -> None:
    key = f"test-exchange:{uuid.uuid4().hex}"
    try:
        await client.rpush(key, b"a")
        with pytest.raises(ResponseError):  # INCRBY on a list; the GET's reply after it is never read
            await exchange(client, [("INCRBY", key, 1), ("GET", key + ":x")], 0.25)
        for _ in range(3):  # whichever pooled connection comes next
            assert await exchange(client, [("LRANGE", key, 0, -1), ("ECHO", "mine")], 0.25) == [[b"a"], b"mine"]
    finally:
        await client.delete(key)
        await client.aclose()


async def test_a_reply_past_the_deadline_times_out_and_leaves_no_stale_reply(client: aioredis.Redis) -> None:
    try:
        with pytest.raises(TimeoutError):
            await exchange(client, [("BLPOP", f"test-exchange:{uuid.uuid4().hex}", 1)], 0.1)  # blocks 1 s
        await asyncio.sleep(1.0)  # the late reply, had the connection been kept, is waiting on it now
        assert await exchange(client, [("ECHO", "mine")], 0.25) == [b"mine"]
    finally:
        await client.aclose()


async def test_a_reply_longer_than_one_read_comes_back_whole(client: aioredis.Redis) -> None:
    key = f"test-exchange:{uuid.uuid4().hex}"
    value = bytes(range(256)) * 1_000  # 256 KB: several reads of the stream, split anywhere
    try:
        replies = await exchange(client, [("SET", key, value, "PX", 60_000), ("GET", key), ("STRLEN", key)], 0.25)
        assert replies == [b"OK", value, len(value)]
    finally:
        await client.delete(key)
        await client.aclose()


async def test_a_connection_the_server_closed_is_replaced_and_the_batch_answered(client: aioredis.Redis) -> None:
    # The pool sees the closed stream the exchange reads from (redis-py's own check), and connects anew.
    admin = redis_client(REDIS_TEST_URL, 0.25)
    try:
        [connection_id] = await exchange(client, [("CLIENT", "ID")], 0.25)  # the one pooled connection
        assert await admin.client_kill_filter(_id=connection_id) == 1
        await asyncio.sleep(0.05)  # the close reaches the client
        echo, new_id = await exchange(client, [("ECHO", "after"), ("CLIENT", "ID")], 0.25)
        assert (echo, new_id != connection_id) == (b"after", True)
    finally:
        await admin.aclose()
        await client.aclose()


async def test_an_exchange_keeps_its_connection_for_the_next_one_within_a_bound(client: aioredis.Redis) -> None:
    """Sequential exchanges share one connection (no pool bookkeeping a trip); concurrent ones keep at most
    IDLE_KEPT and give the rest back to the pool; closing the client disconnects the kept ones too."""
    pool = client.connection_pool
    try:
        ids = [(await exchange(client, [("CLIENT", "ID")], 0.25))[0] for _ in range(5)]
        assert len(set(ids)) == 1, ids
        # Each exchange holds its connection until its reply: these take one each.
        await asyncio.gather(*(exchange(client, [("BLPOP", f"test-exchange:{i}", 0.05)], 1.0) for i in range(12)))
        kept = exchanges._IDLE[pool]
        assert len(kept) == exchanges.IDLE_KEPT
        assert len(pool._available_connections) == 12 - exchanges.IDLE_KEPT  # the rest went back to the pool
    finally:
        await client.aclose()
    assert not any(connection.is_connected for connection in kept)
