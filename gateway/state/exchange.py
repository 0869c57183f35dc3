"""One write of Redis commands and their replies: a round trip at the CPU cost of its socket I/O.

redis-py's pipeline encodes each argument and command in Python, runs a timer for each reply and keeps
per-command bookkeeping (response callbacks, observability, lazy prepares): for a request's batch of
short commands that cost twice the round trip's own I/O (issue 28). Its connection's own send and read
still cost ~6x the I/O: a timer, an error-context string and a task switch for every reply. So on one
server (a plain URL or the master Sentinel names) the commands are packed here (resp.py), written to a
pooled connection's stream, and the bytes that come back are parsed with hiredis (the C parser redis-py
itself uses) until every reply is in. The caller bounds it all, taking the connection included, with
its deadline (deadline.py: one that does not count the event loop's stalls). The connection is
redis-py's: it connects,
authenticates, selects the database and speaks TLS as configured. A Redis Cluster keeps redis-py's
pipeline, which routes each command to its slot's node. Replies are raw (bytes, ints, lists): callers
convert them. A pooled connection whose stream the server closed (a restart, an idle timeout) is
connected anew before it is written to, instead of failing its next batch.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError, InvalidResponse, ResponseError

from gateway.state.resp import Arg, packed

Command = Sequence[Arg]


async def exchange(client: aioredis.Redis, commands: Sequence[Command], *, errors_in_place: bool = False) -> list[Any]:
    """The replies of `commands`, in order, from one round trip, within the caller's deadline. An error
    reply raises its ResponseError, or with `errors_in_place` stands in its command's place (commands of
    several callers: gateway/state/redis.py `batch`, each taking its own). On a Redis Cluster every error
    reply raises: redis-py's cluster pipeline retries the cluster's own transient errors (a failover, "the
    cluster is down") only then, within the deadline: a failover that outlasts it is an outage to the
    caller (the state store's fallback)."""
    replies = await _round_trip(client, commands)
    if not errors_in_place:
        for reply in replies:
            if isinstance(reply, ResponseError):
                raise reply
    return replies


async def _round_trip(client: aioredis.Redis, commands: Sequence[Command]) -> list[Any]:
    if isinstance(client, RedisCluster):
        async with client.pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute())
    pool = client.connection_pool
    idle = _idle(pool)
    connection = idle.pop() if idle else await pool.get_connection()
    try:
        # Retried as redis-py retries a pipeline (a pooled connection the server dropped), reconnected.
        replies: list[Any] = await connection.retry.call_with_retry(
            lambda: _send_and_read(connection, commands), lambda _: connection.disconnect(nowait=True)
        )
    except BaseException:
        # Replies left unread would answer the connection's next user. Not waiting for the close: the
        # deadline that brought us here may be a server that stopped answering.
        await connection.disconnect(nowait=True)
        await pool.release(connection)
        raise
    if idle is not None and len(idle) < IDLE_KEPT:
        idle.append(connection)  # every reply read: in step for the next exchange
    else:
        await pool.release(connection)
    return replies


READ_SIZE = 65_536
# Connections an exchange keeps for the next one, per pool of one server: taking a connection from
# redis-py's pool costs a lock, its observability records and a readiness probe each time (a sixth of a
# round trip's CPU), where a connection that answered every command of its last exchange is in step by
# construction; one the server closed since is connected again before it is written to (_send_and_read).
# Still the pool's (in use there): closing the client disconnects them. A Sentinel's pool is left alone:
# its connections follow the master through its own checks.
IDLE_KEPT = 8
_IDLE: weakref.WeakKeyDictionary[aioredis.ConnectionPool, list[Any]] = weakref.WeakKeyDictionary()


def _idle(pool: aioredis.ConnectionPool) -> list[Any] | None:
    """The pool's idle connections kept by exchanges (None: not a plain one-server pool)."""
    if type(pool) is not aioredis.ConnectionPool:
        return None
    found = _IDLE.get(pool)
    if found is None:
        found = _IDLE[pool] = []
    return found


async def _send_and_read(connection: Any, commands: Sequence[Command]) -> list[Any]:
    """Every reply, an error reply as its exception: read whole, the connection stays in step for its next
    user."""
    if connection.is_connected and connection._reader.at_eof():  # the server closed it while it was pooled
        await connection.disconnect()
    if not connection.is_connected:
        await connection.connect()
    await connection.check_health()  # a PING first when the connection idled past its interval, as redis-py does
    stream, writer = connection._reader, connection._writer
    parser = hiredis.Reader(protocolError=InvalidResponse, replyError=connection._parser.parse_error)
    replies: list[Any] = []
    try:
        writer.write(packed(commands))
        await writer.drain()
        while len(replies) < len(commands):
            reply = parser.gets()
            if reply is not False:
                replies.append(reply)
                continue
            data = await stream.read(READ_SIZE)
            if not data:
                raise ConnectionError("Connection closed by server.")
            parser.feed(data)
    except OSError as error:  # a reset or a broken pipe: redis-py's error for a dropped connection
        raise ConnectionError(f"Error while talking to Redis: {error}") from error
    if connection.health_check_interval:  # redis-py's reads move the next check on: so does this one
        connection.next_health_check = asyncio.get_running_loop().time() + connection.health_check_interval
    return replies
