"""On a Redis Cluster (3 masters, redis-server processes on loopback, `redis+cluster://`): the response
cache's entries and sync log, and two gateway replicas sharing guard state, caches, budgets, rate limits,
managed keys and request records. (The state-store contract runs on the cluster in tests/state.)"""

from __future__ import annotations

import operator
import re
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, TypedDict

import httpx
import numpy as np
import openai
import pytest
import redis

import agent_runtime as ar
from gateway.bounded import Caps
from gateway.response_cache.local_index import LocalIndex
from gateway.response_cache.store import Breaker, RedisBackend
from gateway.response_cache.sync import RedisIndexSync
from gateway.state import RedisStore
from tests.deploy.histories import RUN_TESTS, openai_tool_turns
from tests.deploy.processes import redis_cluster
from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.redis_target import redis_client

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}
CAPS = Caps(max_entries=100, max_bytes=1 << 20, max_entries_per_tenant=100, max_bytes_per_tenant=1 << 20)


class RunLog(TypedDict):
    log: Annotated[list[str], operator.add]


def hello(gw: RunningGateway, secret: str) -> httpx.Response:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "[[sim:text hi]]"}]}
    return httpx.post(f"{gw.url}/v1/chat/completions", headers={"authorization": f"Bearer {secret}"}, json=body)


@pytest.fixture(scope="module")
def cluster_url() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as logs, redis_cluster(Path(logs)) as url:
        yield url


@pytest.fixture(scope="module")
def replicas(cluster_url: str) -> Iterator[tuple[RunningGateway, RunningGateway]]:
    tenants = gateway_settings()["tenants"]
    limits = {"requests_per_minute": 1000, "budgets": [{"window": "day", "usd": 1.0}]}
    settings = gateway_settings(redis_url=cluster_url, tenants=[{**t, "limits": limits} for t in tenants])
    with running_gateway(**settings) as a, running_gateway(**settings) as b:
        yield a, b


def test_each_node_s_bus_port_is_a_worker_port_too(cluster_url: str) -> None:
    """A node's cluster bus port defaults to its port + 10000: in the kernel's ephemeral range or another
    xdist worker's block (tests/ports.py), where CI once found it taken. Each is handed out like the port."""
    floor = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    port = int(cluster_url.rsplit(":", 1)[1])
    with redis.Redis(port=port) as node:
        nodes = node.execute_command("CLUSTER", "NODES").decode().splitlines()
    # each line's address: 127.0.0.1:<port>@<bus port>[,<hostname>]
    ports = [tuple(map(int, re.search(r":(\d+)@(\d+)", line).groups())) for line in nodes]  # type: ignore[union-attr]
    assert len(ports) == 3
    assert all(bus != own + 10_000 and bus < floor for own, bus in ports)


async def test_response_cache_entries_and_sync_log_span_the_slots(cluster_url: str) -> None:
    store = RedisStore(cluster_url, prefix=f"t-{uuid.uuid4().hex[:8]}:")
    backend = RedisBackend(store.client, store.prefix, 3, Breaker(store.timeout_s))
    keys = [f"rc:acme:default:gpt:s:{i}" for i in range(5)]  # entries of many hash slots
    for key in keys:
        await backend.put(key, key.encode(), 60.0)
    found = await backend.get_many(keys)
    assert found == [None, None, *[k.encode() for k in keys[2:]]]  # the oldest two evicted (3 kept)
    assert sorted(await backend.keys("rc:acme:")) == keys[2:]
    vector = np.ones(4, dtype=np.float32) / 2
    writer = RedisIndexSync(backend, LocalIndex(CAPS), 100, Breaker())
    await writer.publish_add(keys[2], "scope", vector, time.time() + 60)
    reader_index = LocalIndex(CAPS)
    reader = RedisIndexSync(backend, reader_index, 100, Breaker())
    await reader.catch_up()
    await writer.publish_add(keys[3], "scope", vector, time.time() + 60)
    await reader.catch_up()
    assert len(reader_index) >= 1 and keys[3] in {m.key for m in reader_index.search("scope", vector, 5, 0.5)}
    assert await backend.delete(keys[2:]) == 3 and await backend.keys("rc:") == []
    await store.close()


def test_two_replicas_share_everything_on_the_cluster(replicas: tuple[RunningGateway, RunningGateway]) -> None:
    a, b = replicas
    key = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    body = {"model": "gpt-4o-mini", "temperature": 0, "messages": [{"role": "user", "content": f"Q {uuid.uuid4()}"}]}
    first = httpx.post(f"{a.url}/v1/chat/completions", headers=key, json=body)
    again = httpx.post(f"{b.url}/v1/chat/completions", headers=key, json=body)
    assert first.headers["x-cachegate-cache"] == "miss" and again.headers["x-cachegate-cache"] == "exact"
    # A looping session, its requests alternating between the replicas, is blocked on both.
    session = {"x-session-id": f"loop-{uuid.uuid4().hex[:8]}"}
    clients = [gw.openai(default_headers=session) for gw in (a, b)]
    blocked_at = None
    for turns in range(1, 12):
        try:
            clients[turns % 2].chat.completions.create(
                model="gpt-4o-mini", tools=RUN_TESTS, messages=openai_tool_turns(turns, "1 failed: test_login")
            )
        except openai.BadRequestError:
            blocked_at = turns
            break
    assert blocked_at is not None
    with pytest.raises(openai.BadRequestError):
        clients[(blocked_at + 1) % 2].chat.completions.create(
            model="gpt-4o-mini", tools=RUN_TESTS, messages=openai_tool_turns(blocked_at, "1 failed: test_login")
        )
    # A managed key issued on A works on B; the record of its request opens on A.
    made = httpx.post(f"{a.url}/admin/keys", json={"tenant": "acme"}, headers=ADMIN).json()
    deadline = time.monotonic() + 2
    while (used := hello(b, made["secret"])).status_code == 401:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    deadline = time.monotonic() + 2
    while httpx.get(f"{a.url}/v1/requests/{used.headers['x-request-id']}", headers=key).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    spent = [r for r in httpx.get(f"{b.url}/admin/budgets", headers=ADMIN).json()["budgets"] if r["tenant"] == "acme"]
    assert spent and spent[0]["usd_spent"] > 0


def test_a_rate_limit_holds_exactly_across_replicas_on_the_cluster(cluster_url: str) -> None:
    tenants = gateway_settings()["tenants"]
    settings = gateway_settings(
        redis_url=cluster_url, tenants=[{**t, "limits": {"requests_per_minute": 7}} for t in tenants]
    )
    with running_gateway(**settings) as a, running_gateway(**settings) as b, ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(lambda i: hello((a, b)[i % 2], TENANT_KEYS["globex"]).status_code, range(20)))
    assert codes.count(200) == 7 and codes.count(429) == 13


# Braces in an id must not break the hash tag: "}x" would make "{}x}" an empty tag, i.e. none.
@pytest.mark.parametrize("thread_id", ["team-a/run 1", "}run 2", "{team}/run 3"])
def test_agent_runtime_checkpoints_a_thread_on_the_cluster(cluster_url: str, thread_id: str) -> None:
    client = redis_client(cluster_url)
    saver = ar.RedisCheckpointer(client, prefix=f"cp-{uuid.uuid4().hex}")
    graph = ar.StateGraph(RunLog)
    graph.add_node("step", lambda state: {"log": [f"step {len(state['log'])}"]})
    graph.add_edge(ar.START, "step")
    graph.add_edge("step", ar.END)
    app = graph.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread_id}}
    app.invoke({"log": []}, config)
    app.invoke({"log": []}, config)
    assert app.get_state(config).values["log"] == ["step 0", "step 1"]
    assert len(list(app.get_state_history(config))) >= 4
    keys = list(client.scan_iter(match=f"{saver.prefix}:*"))
    assert len({client.keyslot(key) for key in keys}) == 1
    saver.delete_thread(thread_id)
    assert not list(client.scan_iter(match=f"{saver.prefix}:*"))
