"""The compose topology as real processes: two `cachegate serve` replicas sharing one redis-server, in
front of one `cachegate sim` as the provider, each replica running the production config
(deploy/cachegate.yaml) with only the provider addresses, the Redis URL and the keys swapped for local ones.
"""

from __future__ import annotations

import asyncio
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
import pytest
import yaml
from redis import Redis

from gateway.compaction.shared_counts import ENTRY, counts_key
from gateway.compaction.tokens import counter_for
from gateway.history.facts import content_digest
from gateway.state import RedisStore
from tests.deploy.histories import RUN_TESTS, openai_tool_turns
from tests.deploy.processes import REPO, Spawned, answers_http, cachegate, redis_server, spawned
from tests.deploy.topology import ADMIN, REPLICAS, answered, replica_config
from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS
from tests.ports import spawn_port

MAX_LOOP_TURNS = 16


@dataclass
class Topology:
    redis: Spawned
    redis_url: str
    sim_url: str
    replicas: list[str]

    def client(self, replica: int) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.replicas[replica]}/v1", api_key=TENANT_KEYS["acme"], max_retries=0)

    def stats(self, replica: int, prefix: str | None = None) -> dict[str, Any]:
        params = {"prefix": prefix} if prefix else None
        response = httpx.get(f"{self.replicas[replica]}/admin/state/stats", headers=ADMIN, params=params)
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats


def sim_requests(topology: Topology) -> int:
    totals: dict[str, int] = httpx.get(f"{topology.sim_url}/sim/stats", headers=ADMIN).json()["totals"]
    return totals.get("requests", 0)


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    logs = tmp_path_factory.mktemp("replicas")
    with redis_server(logs) as (redis, redis_url):
        sim_port = spawn_port()
        sim_url = f"http://127.0.0.1:{sim_port}"
        config = logs / "cachegate.yaml"
        config.write_text(yaml.safe_dump(replica_config(sim_url, redis_url)))
        ports = [spawn_port() for _ in REPLICAS]
        with ExitStack() as processes:
            sim_argv = cachegate("sim", "--port", str(sim_port), "--admin-key", ADMIN_KEY)
            sim = processes.enter_context(spawned("sim", sim_argv, logs))
            # All replicas start at once (their imports take seconds), then each is waited for.
            gateways = [
                processes.enter_context(
                    spawned(name, cachegate("serve", "--config", str(config), "--port", str(port)), logs)
                )
                for name, port in zip(REPLICAS, ports, strict=True)
            ]
            sim.wait_until(answers_http(f"{sim_url}/healthz"))
            replicas = [f"http://127.0.0.1:{port}" for port in ports]
            for process, url in zip(gateways, replicas, strict=True):
                process.wait_until(answers_http(f"{url}/readyz"))
            yield Topology(redis=redis, redis_url=redis_url, sim_url=sim_url, replicas=replicas)


def test_both_replicas_use_the_shared_redis(topology: Topology) -> None:
    for replica in (0, 1):
        stats = topology.stats(replica)
        assert stats["backend"] == "redis" and stats["shared"] and stats["healthy"], stats


def test_state_written_by_one_writer_is_seen_by_both_replicas(topology: Topology) -> None:
    prefix = f"acme:deploy-{uuid.uuid4().hex[:8]}:"

    async def write() -> None:
        # The gateway's own Redis store, as a third replica would write through it.
        store = RedisStore(topology.redis_url)
        try:
            for i in range(3):
                await store.set(f"{prefix}session-{i}", b"state", ttl_s=60)
        finally:
            await store.close()

    assert [topology.stats(r, prefix)["keys"] for r in (0, 1)] == [0, 0]
    asyncio.run(write())
    assert [topology.stats(r, prefix)["keys"] for r in (0, 1)] == [3, 3]


def test_a_session_is_served_by_either_replica(topology: Topology) -> None:
    """One agent session whose turns land on different replicas (a replica joined or left the balancer, or
    a client calls replicas directly): each replica serves it from the shared state."""
    session = {"x-session-id": f"deploy-{uuid.uuid4().hex[:8]}"}
    before = sim_requests(topology)
    answers = []
    for turn, replica in enumerate((0, 1, 0, 1)):
        raw = topology.client(replica).chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": f"[[sim:text turn {turn}]]"}],
            extra_headers=session,
        )
        assert raw.headers["x-cachegate-session"] == session["x-session-id"]
        answers.append(raw.parse().choices[0].message.content)
    assert answers == [f"turn {turn}" for turn in range(4)]
    assert sim_requests(topology) - before == 4, "both replicas call the one provider"


def test_a_response_cached_through_one_replica_is_served_by_the_other(topology: Topology) -> None:
    messages: Any = [{"role": "user", "content": f"[[sim:text cached answer {uuid.uuid4().hex[:8]}]]"}]
    # The exact tier only: a semantic lookup would load the embedding model in both replicas, for nothing.
    exact_only = {"x-cachegate-cache-semantic": "off"}
    before = sim_requests(topology)
    first, second = (
        topology.client(replica).chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=messages, temperature=0, extra_headers=exact_only
        )
        for replica in (0, 1)
    )
    assert first.headers["x-cachegate-cache"] == "miss"
    assert second.headers["x-cachegate-cache"] == "exact"
    assert second.parse().choices[0].message.content == first.parse().choices[0].message.content
    assert sim_requests(topology) - before == 1, "the second replica answered without calling the provider"


def test_a_session_stopped_on_one_replica_is_blocked_on_the_other(topology: Topology) -> None:
    """The loop guard's strikes live in Redis: a replica that never saw the session still refuses it."""
    session = {"x-session-id": f"loop-{uuid.uuid4().hex[:8]}"}

    def turn(replica: int, turns: int) -> None:
        topology.client(replica).chat.completions.create(
            model="gpt-4o-mini",
            tools=RUN_TESTS,
            extra_headers=session,
            messages=openai_tool_turns(turns, "1 failed: test_login"),
        )

    blocked_at = None
    for turns in range(1, MAX_LOOP_TURNS):
        try:
            turn(0, turns)
        except openai.BadRequestError as blocked:
            assert blocked.code == "LOOP"
            blocked_at = turns
            break
    assert blocked_at is not None, f"replica 1 never blocked the loop in {MAX_LOOP_TURNS} turns"
    with pytest.raises(openai.BadRequestError):
        turn(1, blocked_at + 1)


def balancer_conf(replica_ports: list[int], port: int, log_dir: Path) -> str:
    """deploy/nginx.conf for loopback: the replicas' ports, a free port, logs and pid in log_dir."""
    conf = (REPO / "deploy" / "nginx.conf").read_text()
    for name, replica_port in zip(REPLICAS, replica_ports, strict=True):
        conf = conf.replace(f"server {name}:4000", f"server 127.0.0.1:{replica_port}")
    conf = conf.replace("listen 80;", f"listen 127.0.0.1:{port};")
    conf = conf.replace("access_log /dev/stdout;", f"access_log {log_dir}/nginx-access.log;")
    conf = conf.replace("error_log /dev/stderr warn;", f"error_log {log_dir}/nginx-error.log warn;")
    return f"daemon off;\npid {log_dir}/nginx.pid;\n{conf}"


@pytest.fixture(scope="module")
def balancer(topology: Topology, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """nginx running deploy/nginx.conf in front of the two replicas; yields its URL."""
    nginx = shutil.which("nginx")
    if nginx is None:
        pytest.skip("nginx is not installed (apt-get install nginx)")
    logs = tmp_path_factory.mktemp("balancer")
    port = spawn_port()
    replica_ports = [int(url.rsplit(":", 1)[1]) for url in topology.replicas]
    conf = logs / "nginx.conf"
    conf.write_text(balancer_conf(replica_ports, port, logs))
    with spawned("nginx", [nginx, "-c", str(conf), "-e", str(logs / "nginx-startup.log")], logs) as process:
        url = f"http://127.0.0.1:{port}"
        process.wait_until(answers_http(f"{url}/nginx-health"))
        yield url


def served_through(topology: Topology, balancer: str, requests: int, headers: dict[str, str]) -> list[float]:
    """How many of `requests` session-less or session requests through the balancer each replica answered."""
    before = [answered(url) for url in topology.replicas]
    client = openai.OpenAI(base_url=f"{balancer}/v1", api_key=TENANT_KEYS["acme"], max_retries=0)
    for i in range(requests):
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": f"[[sim:text via nginx {i}]]"}],
            extra_headers=headers,
        )
        assert reply.choices[0].message.content == f"via nginx {i}"
    return [answered(url) - start for url, start in zip(topology.replicas, before, strict=True)]


def test_the_balancer_spreads_requests_without_a_session_over_both_replicas(topology: Topology, balancer: str) -> None:
    served = served_through(topology, balancer, 16, {})  # all on one replica: a chance of 2 in 65,536
    assert sum(served) == 16 and min(served) >= 1, served


@pytest.mark.parametrize("header", ["x-session-id", "x-claude-code-session-id", "session-id", "thread-id"])
def test_the_balancer_keeps_a_session_on_one_replica(topology: Topology, balancer: str, header: str) -> None:
    """Each replica keeps what it derived from a session's messages: the session's turns go to one of them."""
    sessions = [{header: f"sticky-{uuid.uuid4().hex[:8]}"} for _ in range(3)]
    for session in sessions:
        assert sorted(served_through(topology, balancer, 4, session)) == [0, 4]


def test_the_dashboard_behind_the_balancer_shows_the_same_sessions_and_requests(
    topology: Topology, balancer: str
) -> None:
    """Each dashboard refresh may reach another replica: sessions, recent requests and a request's record
    come from the shared store, so every refresh shows the same."""
    session = f"dash-{uuid.uuid4().hex[:8]}"
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-session-id": session}
    ids = []
    for i in range(4):
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"[[sim:text turn {i}]]"}]}
        ids.append(httpx.post(f"{balancer}/v1/chat/completions", json=body, headers=headers).headers["x-request-id"])
    deadline = time.monotonic() + 3.0
    while True:
        views = [httpx.get(f"{balancer}/admin/dashboard/data", headers=ADMIN).json() for _ in range(4)]
        mine = [[s for s in view["sessions"] if s["session"] == session] for view in views]
        if all(m and m[0]["requests"] == 4 for m in mine) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert all(m and m[0] == mine[0][0] and m[0]["requests"] == 4 for m in mine), mine
    assert all({r["id"] for r in view["requests"]} >= set(ids) for view in views)
    for replica in topology.replicas:  # a request id opens its record on either replica
        found = httpx.get(f"{replica}/v1/requests/{ids[0]}", headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"})
        assert found.status_code == 200 and found.json()["session"] == session


def test_streams_and_their_trailer_pass_through_the_balancer(balancer: str) -> None:
    body = {
        "model": "gpt-4o-mini",
        "stream": True,
        "messages": [{"role": "user", "content": "[[sim:text one two three four]]"}],
    }
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    with httpx.stream("POST", f"{balancer}/v1/chat/completions", json=body, headers=headers) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        raw = "".join(response.iter_text())
    assert "data: [DONE]" in raw and ": cachegate {" in raw, raw[-300:]


def test_the_balancer_keeps_metrics_to_prometheus(balancer: str) -> None:
    assert httpx.get(f"{balancer}/metrics").status_code == 404
    assert httpx.get(f"{balancer}/healthz").status_code == 200


def test_token_counts_taken_by_one_replica_are_not_taken_again_by_the_other(topology: Topology) -> None:
    """Compaction counts a long history's tokens once per session, not once per replica that answers it
    (gateway/compaction/shared_counts.py). Byte-heavy, token-light tool results (runs of spaces) put the
    history's byte bound over gpt-4o-mini's trigger (64K tokens of 128K) while its count stays far under."""
    tag = uuid.uuid4().hex[:8]
    messages = openai_tool_turns(8, "")
    for number, message in enumerate(messages):
        if message["role"] == "tool":
            message["content"] = f"output {number} [{tag}]" + " " * 15_000
    session = f"counts-{tag}"
    encoding = counter_for("openai", "gpt-4o-mini")

    def send(replica: int, history: list[Any]) -> int:
        raw = topology.client(replica).chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=history, extra_headers={"x-session-id": session}
        )
        return int(raw.headers["x-cachegate-compaction-tokens-before"])

    first = messages[:-2]
    counted = send(0, first)
    key = f"cg:{counts_key(f'acme:{session}', encoding.name)}"
    redis = Redis.from_url(topology.redis_url)
    record = dict(ENTRY.iter_unpack(redis.get(key)))
    exact = {content_digest(orjson.dumps(m)): encoding.message(m) for m in first}
    assert record == exact
    # The record is what the other replica counts by: marked (+7 each), the marks show in its total.
    redis.set(key, b"".join(ENTRY.pack(digest, count + 7) for digest, count in record.items()))
    new = sum(encoding.message(m) for m in messages[-2:])
    assert send(1, messages) == counted + 7 * len(first) + new
    redis.close()


def test_a_redis_outage_degrades_every_replica_to_its_fallback(topology: Topology) -> None:
    """Last: stops the shared Redis. Each replica then says so (readyz 503) and keeps serving."""
    topology.redis.kill()
    for replica, url in enumerate(topology.replicas):
        assert httpx.get(f"{url}/readyz").status_code == 503
        stats = topology.stats(replica, "acme:")
        assert stats["backend"] == "memory (fallback)" and not stats["healthy"] and not stats["shared"]
        reply = topology.client(replica).chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "[[sim:text still here]]"}]
        )
        assert reply.choices[0].message.content == "still here"
    metrics = httpx.get(f"{topology.replicas[0]}/metrics", headers=ADMIN).text
    assert 'cachegate_state_fallbacks_total{operation="scan"}' in metrics
