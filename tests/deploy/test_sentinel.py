"""A plain Redis replica set behind Sentinel: the gateway's state follows the master through a failover."""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from gateway.state import RedisStore, StateUnavailable
from gateway.state.clients import sentinel_master
from tests.deploy.processes import SentinelSet, redis_sentinel

FAILOVER_TIMEOUT_S = 30.0


@pytest.fixture
def replica_set(tmp_path: Path) -> Iterator[SentinelSet]:
    with redis_sentinel(tmp_path) as found:
        yield found


async def retried(operation: object, deadline: float) -> object:
    """The operation, retried while the store cannot answer (the gap between a master's death and its
    replacement, which the gateway spends on its per-replica fallback)."""
    while True:
        try:
            return await operation()  # type: ignore[operator]
        except StateUnavailable:
            assert time.monotonic() < deadline, "the store never reached the new master"
            await asyncio.sleep(0.2)


async def test_the_store_writes_to_the_new_master_after_a_failover(replica_set: SentinelSet) -> None:
    store = RedisStore(replica_set.url, timeout_s=1.0, prefix=f"sentinel-{uuid.uuid4().hex[:6]}:")
    await store.set("before", b"1")
    with redis.Redis(port=replica_set.master_port) as master:
        assert master.get(store.key("before")) == b"1", "writes go to the master Sentinel names"
        # Replication is asynchronous: what the master had not yet sent is lost with it, as in production.
        assert master.execute_command("WAIT", 1, 5000) == 1
    replica_set.master.process.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + FAILOVER_TIMEOUT_S
    while replica_set.master_address()[1] != replica_set.replica_port:
        assert time.monotonic() < deadline, "Sentinel did not promote the replica"
        await asyncio.sleep(0.2)
    await retried(lambda: store.set("after", b"2"), deadline)
    with redis.Redis(port=replica_set.replica_port) as promoted:
        assert promoted.get(store.key("after")) == b"2", "the write reached the promoted replica"
        assert promoted.get(store.key("before")) == b"1", "what was written before the failover survived it"
    await store.close()


def test_a_sentinel_url_must_name_the_master() -> None:
    with pytest.raises(ValueError, match="names its sentinels and the master"):
        sentinel_master("127.0.0.1:26379", 0.25, tls=False)
