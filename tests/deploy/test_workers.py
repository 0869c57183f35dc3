"""`cachegate serve --workers N` as real processes: one port, N worker processes sharing a redis-server,
in front of one `cachegate sim`. Every request goes on a new connection, so the kernel hands it to any
worker; the test tells the workers apart by the metric files each writes.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml

from gateway.config import load_settings
from gateway.workers import available_cores, worker_count
from tests.deploy.histories import RUN_TESTS, openai_tool_turns
from tests.deploy.processes import Spawned, answers_http, cachegate, redis_server, spawned
from tests.deploy.topology import answered, replica_config
from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS
from tests.ports import spawn_port

MAX_LOOP_TURNS = 16


@dataclass
class Served:
    process: Spawned
    url: str
    metrics_dir: Path

    def client(self) -> openai.OpenAI:
        # No keep-alive: each request a new connection, accepted by whichever worker the kernel picks.
        fresh = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=TENANT_KEYS["acme"], max_retries=0, http_client=fresh)

    def worker_pids(self) -> set[int]:
        """Workers that have written metrics (each writes counter_<pid>.db on its first count)."""
        return {int(f.stem.split("_")[1]) for f in self.metrics_dir.glob("counter_*.db")}


@dataclass
class Gateways:
    single: Served
    workers: Served


@pytest.fixture(scope="module")
def gateways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateways]:
    logs = tmp_path_factory.mktemp("workers")
    with redis_server(logs) as (_, redis_url), ExitStack() as processes:
        sim_port = spawn_port()
        sim_url = f"http://127.0.0.1:{sim_port}"
        config = logs / "cachegate.yaml"
        config.write_text(yaml.safe_dump(replica_config(sim_url, redis_url)))
        sim = processes.enter_context(
            spawned("sim", cachegate("sim", "--port", str(sim_port), "--admin-key", ADMIN_KEY), logs)
        )
        served = []
        for name, count in (("single", 1), ("workers", 2)):
            port, metrics_dir = spawn_port(), logs / f"metrics-{name}"
            argv = cachegate("serve", "--config", str(config), "--port", str(port), "--workers", str(count))
            env = {"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)} if count > 1 else None
            process = processes.enter_context(spawned(name, argv, logs, env))
            served.append(Served(process, f"http://127.0.0.1:{port}", metrics_dir))
        sim.wait_until(answers_http(f"{sim_url}/healthz"))
        for gateway in served:
            gateway.process.wait_until(answers_http(f"{gateway.url}/readyz"))
        yield Gateways(*served)


def parent_of(pid: int) -> int:
    # /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after its ')'.
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_both_workers_serve_and_metrics_count_every_request(gateways: Gateways) -> None:
    workers = gateways.workers
    before = answered(workers.url)
    client = workers.client()
    for turn in range(40):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": f"[[sim:text worker turn {turn}]]"}]
        )
    pids = workers.worker_pids()
    assert len(pids) == 2, f"expected two workers to have answered, saw {pids}"
    supervisor = {parent_of(pid) for pid in pids}
    assert supervisor == {workers.process.process.pid}, "the workers are children of the one `cachegate serve`"
    # /metrics answers from one worker but counts both: every request, whoever served it.
    assert answered(workers.url) - before == 40


def loop_blocked_at(gateway: Served) -> int:
    session = {"x-session-id": f"loop-{uuid.uuid4().hex[:8]}"}
    client = gateway.client()
    for turns in range(1, MAX_LOOP_TURNS):
        try:
            client.chat.completions.create(
                model="gpt-4o-mini",
                tools=RUN_TESTS,
                extra_headers=session,
                messages=openai_tool_turns(turns, "1 failed: test_login"),
            )
        except openai.BadRequestError as blocked:  # the block: 400, which no OpenAI client retries
            assert blocked.code == "LOOP"
            return turns
    raise AssertionError(f"the loop was never blocked in {MAX_LOOP_TURNS} turns")


def test_the_guard_stops_a_loop_at_the_same_step_whichever_worker_serves_it(gateways: Gateways) -> None:
    assert loop_blocked_at(gateways.workers) == loop_blocked_at(gateways.single)


def test_a_cached_answer_is_served_by_any_worker(gateways: Gateways) -> None:
    client = gateways.workers.client()
    exact_only = {"x-cachegate-cache-semantic": "off"}
    outcomes: list[tuple[str, str]] = []
    for prompt in range(6):
        messages: Any = [{"role": "user", "content": f"[[sim:text cached {prompt} {uuid.uuid4().hex[:8]}]]"}]
        first, second = (
            client.chat.completions.with_raw_response.create(
                model="gpt-4o-mini", messages=messages, temperature=0, extra_headers=exact_only
            )
            for _ in range(2)
        )
        outcomes.append((first.headers["x-cachegate-cache"], second.headers["x-cachegate-cache"]))
    assert outcomes == [("miss", "exact")] * 6


def test_several_workers_without_redis_are_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        cachegate("serve", "--port", str(spawn_port()), "--workers", "2"), capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "--workers 2 needs shared state" in done.stderr


def test_the_default_is_one_worker_per_core_with_redis_and_one_without() -> None:
    with_redis = load_settings(redis_url="redis://127.0.0.1:6379/0")
    assert worker_count(None, with_redis) == available_cores()
    assert worker_count(None, load_settings()) == 1
    assert worker_count(3, with_redis) == 3
