"""One write of Redis commands and their replies: a round trip at the CPU cost of its socket I/O.

redis-py's pipeline encodes each argument and command in Python, runs a timer for each reply and keeps
per-command bookkeeping (response callbacks, observability, lazy prepares): for a request's batch of
short commands that cost twice the round trip's own I/O (issue 28). On one server (a plain URL or the
master Sentinel names) the commands are packed here (resp.py) and sent over a pooled connection, with
one deadline for all their replies; a Redis Cluster keeps redis-py's pipeline, which routes each command
to its slot's node. Replies are raw (bytes, ints, lists): callers convert them.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from gateway.state.resp import Arg, packed

Command = Sequence[Arg]


async def exchange(client: aioredis.Redis, commands: Sequence[Command], timeout_s: float) -> list[Any]:
    """The replies of `commands`, in order, from one round trip (an error reply raises its ResponseError)."""
    if isinstance(client, RedisCluster):
        async with client.pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute())
    pool = client.connection_pool
    connection = await pool.get_connection()
    try:
        # Retried as redis-py retries a pipeline (a pooled connection the server dropped), reconnected.
        replies: list[Any] = await connection.retry.call_with_retry(
            lambda: _send_and_read(connection, commands, timeout_s), lambda _: connection.disconnect()
        )
        return replies
    except BaseException:
        await connection.disconnect()  # replies left unread would answer the connection's next user
        raise
    finally:
        await pool.release(connection)


async def _send_and_read(connection: Any, commands: Sequence[Command], timeout_s: float) -> list[Any]:
    await connection.send_packed_command(packed(commands))
    async with asyncio.timeout(timeout_s):  # one deadline for the replies, not a timer for each
        return [await connection.read_response(timeout=math.inf) for _ in commands]
