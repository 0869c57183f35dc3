"""Real processes for the deployment tests: redis-server, `cachegate serve`, `cachegate sim`.

Each runs in its own process group with its output in a log file (a pipe nobody reads would block it),
and is killed with its group when the block exits, whatever happened.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import redis

from tests.ports import spawn_port

REPO = Path(__file__).resolve().parents[2]
# Two replicas of two workers and a simulator import LiteLLM at once, beside the other test worker: on a
# loaded 2-core machine that took over 60 s once (a full suite at 13 min). Waiting costs nothing when fast.
STARTUP_TIMEOUT_S = 120.0


def own_environment() -> dict[str, str]:
    """This environment without gateway settings, so a process is configured by its arguments alone."""
    settings = ("REDIS_URL", "PROMETHEUS_MULTIPROC_DIR")
    return {k: v for k, v in os.environ.items() if not k.startswith("CACHEGATE_") and k not in settings}


class Spawned:
    def __init__(self, name: str, argv: list[str], log_dir: Path, env: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.log = log_dir / f"{name}.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                argv,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**own_environment(), "PYTHONUNBUFFERED": "1", **(env or {})},
            )

    def tail(self, chars: int = 2000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def wait_until(self, ready: Callable[[], bool], timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} not ready after {timeout_s} s:\n{self.tail()}")
            time.sleep(0.1)

    def kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


@contextmanager
def spawned(name: str, argv: list[str], log_dir: Path, env: Mapping[str, str] | None = None) -> Iterator[Spawned]:
    process = Spawned(name, argv, log_dir, env)
    try:
        yield process
    finally:
        process.kill()


def answers_http(url: str) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            return httpx.get(url, timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    return ready


def answers_redis(url: str) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            with redis.Redis.from_url(url, socket_timeout=1.0) as client:
                return bool(client.ping())
        except redis.RedisError:
            return False

    return ready


@contextmanager
def redis_server(log_dir: Path) -> Iterator[tuple[Spawned, str]]:
    """A private redis-server on a free loopback port, keeping nothing on disk; yields it and its URL."""
    binary = shutil.which("redis-server")
    assert binary, "the deployment tests need redis-server (.ci/run installs it)"
    port = spawn_port()
    argv = [
        binary,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(log_dir),
    ]
    url = f"redis://127.0.0.1:{port}/0"
    with spawned(f"redis-{port}", argv, log_dir) as server:
        server.wait_until(answers_redis(url))
        yield server, url


@contextmanager
def redis_cluster(log_dir: Path, masters: int = 3) -> Iterator[str]:
    """A private Redis Cluster of `masters` redis-server processes on loopback (no replicas, nothing on
    disk); yields its URL in the gateway's form, `redis+cluster://127.0.0.1:<a node's port>`."""
    binary, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    assert binary and cli, "the cluster tests need redis-server and redis-cli (.ci/run installs them)"
    ports = [spawn_port() for _ in range(masters)]
    with contextlib.ExitStack() as stack:
        for port in ports:
            node_dir = log_dir / f"node-{port}"
            node_dir.mkdir(parents=True, exist_ok=True)
            argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                    "--dir", str(node_dir), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "2000",
                    # the bus port defaults to port + 10000, in the ephemeral range or another worker's block
                    "--cluster-port", str(spawn_port())]  # fmt: skip
            server = stack.enter_context(spawned(f"redis-cluster-{port}", argv, log_dir))
            server.wait_until(answers_redis(f"redis://127.0.0.1:{port}/0"))
        nodes = [f"127.0.0.1:{port}" for port in ports]
        subprocess.run(
            [cli, "--cluster", "create", *nodes, "--cluster-replicas", "0", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        for port in ports:  # each node's own view: one answers "the cluster is down" until it has converged
            with redis.Redis(port=port) as probe:
                while probe.cluster("INFO").get("cluster_state") != "ok":
                    assert time.monotonic() < deadline, "the cluster did not come up"
                    time.sleep(0.1)
        yield f"redis+cluster://127.0.0.1:{ports[0]}"


@dataclass
class SentinelSet:
    """A master, its replica and one Sentinel watching them as `SENTINEL_SERVICE` (quorum 1)."""

    url: str  # the gateway's form: redis+sentinel://127.0.0.1:<sentinel port>/<service>
    master: Spawned
    master_port: int
    replica_port: int
    sentinel_port: int

    def master_address(self) -> tuple[str, int]:
        with redis.Redis(port=self.sentinel_port, socket_timeout=1.0) as sentinel:
            host, port = sentinel.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SENTINEL_SERVICE)
        return host.decode(), int(port)


SENTINEL_SERVICE = "cachegate"


@contextmanager
def redis_sentinel(log_dir: Path) -> Iterator[SentinelSet]:
    """A plain replica set behind Sentinel on loopback, nothing on disk; a master down for 1 s is failed over."""
    binary = shutil.which("redis-server")
    assert binary, "the Sentinel tests need redis-server (.ci/run installs it)"
    master_port, replica_port, sentinel_port = spawn_port(), spawn_port(), spawn_port()
    common = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(log_dir)]
    conf = log_dir / "sentinel.conf"  # Sentinel rewrites its file: a writable copy of its own
    conf.write_text(
        f"port {sentinel_port}\nbind 127.0.0.1\ndir {log_dir}\n"
        f"sentinel monitor {SENTINEL_SERVICE} 127.0.0.1 {master_port} 1\n"
        f"sentinel down-after-milliseconds {SENTINEL_SERVICE} 1000\n"
        f"sentinel failover-timeout {SENTINEL_SERVICE} 5000\n"
    )
    with contextlib.ExitStack() as stack:
        master = stack.enter_context(
            spawned(f"redis-master-{master_port}", [binary, "--port", str(master_port), *common], log_dir)
        )
        master.wait_until(answers_redis(f"redis://127.0.0.1:{master_port}/0"))
        replica_argv = [binary, "--port", str(replica_port), *common, "--replicaof", "127.0.0.1", str(master_port)]
        replica = stack.enter_context(spawned(f"redis-replica-{replica_port}", replica_argv, log_dir))
        replica.wait_until(answers_redis(f"redis://127.0.0.1:{replica_port}/0"))
        sentinel = stack.enter_context(
            spawned(f"redis-sentinel-{sentinel_port}", [binary, str(conf), "--sentinel"], log_dir)
        )
        sentinel.wait_until(answers_redis(f"redis://127.0.0.1:{sentinel_port}/0"))
        url = f"redis+sentinel://127.0.0.1:{sentinel_port}/{SENTINEL_SERVICE}"
        yield SentinelSet(url, master, master_port, replica_port, sentinel_port)


def cachegate(*args: str) -> list[str]:
    """argv for the `cachegate` command, run with this interpreter (the venv's)."""
    return [sys.executable, "-m", "gateway.cli", *args]
