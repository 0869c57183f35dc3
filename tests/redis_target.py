"""The suite's Redis, named in one place: by default the server on 127.0.0.1:6379, a numbered database per
suite; with CACHEGATE_TEST_REDIS set to a cluster URL (`redis+cluster://host:port`, as tests/run_on_cluster.py
does), that cluster for every suite. A cluster has only database 0: suites there share it, and a flush
empties every primary.

Tests that stop or kill their Redis (tests/deploy, the outage tests) keep redis-server processes of their
own; tests that only need an empty one take `empty_redis()`: a private server, or the cluster flushed."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
from redis.cluster import RedisCluster

from gateway.state.clients import CLUSTER_SCHEMES

TARGET_ENV = "CACHEGATE_TEST_REDIS"


def cluster_target() -> str | None:
    """The cluster URL every suite runs against, or None for the default single server."""
    return os.environ.get(TARGET_ENV) or None


def redis_url(db: int) -> str:
    """The URL of the suite's Redis: database `db` of 127.0.0.1:6379, or the cluster target."""
    return cluster_target() or f"redis://127.0.0.1:6379/{db}"


def redis_client(url: str) -> redis.Redis | RedisCluster:
    """A synchronous client for `url`, parsed as the gateway parses it (gateway.state.clients.redis_client)."""
    scheme, _, rest = url.partition("://")
    if scheme in CLUSTER_SCHEMES:
        return RedisCluster.from_url(f"{CLUSTER_SCHEMES[scheme]}://{rest}")
    return redis.Redis.from_url(url)


def flush(url: str) -> None:
    """Empty the database `url` names; on a cluster, every primary (FLUSHALL, the only database there)."""
    client = redis_client(url)
    try:
        if isinstance(client, RedisCluster):
            client.flushall(target_nodes=RedisCluster.PRIMARIES)
        else:
            client.flushdb()
    finally:
        client.close()


@contextmanager
def empty_redis() -> Iterator[str]:
    """The URL of a Redis with nothing in it, for one test's use: the cluster target (flushed before and
    after), else a private redis-server on a free port, gone afterwards."""
    from tests.deploy.processes import redis_server  # not at import time: most tests need no Redis process

    target = cluster_target()
    if target is not None:
        flush(target)
        try:
            yield target
        finally:
            flush(target)
        return
    with tempfile.TemporaryDirectory() as logs, redis_server(Path(logs)) as (_, url):
        yield url
