"""The servers under test, each its own process: the trivial upstream, the gateway (core only / all stages),
LiteLLM's proxy. Configs go to a temporary directory; every process is stopped by its own pid."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from gateway.config import hash_key
from tests.deploy.processes import redis_server

REPO = Path(__file__).resolve().parents[2]
TENANT_KEY = "sk-bench-tenant"
LITELLM_KEY = "sk-bench-litellm"
UPSTREAM_KEY = "sk-bench-upstream"
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}
OPTIONAL_STAGES = ("guard", "compaction", "response_cache", "prompt_cache")
CORE_ONLY = {stage: {"enabled": False} for stage in OPTIONAL_STAGES}
STARTUP_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class Server:
    name: str
    url: str
    process: subprocess.Popen[bytes]

    def cpu_s(self) -> float:
        """User + system CPU seconds so far of the server process and its children (a supervisor's
        workers), from Linux /proc."""
        return sum(process_cpu_s(pid) for pid in (self.process.pid, *children(self.process.pid)))


def _stat(pid: int) -> list[str]:
    # "pid (comm) state ppid ...": comm may hold spaces, so split after its ')'.
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_cpu_s(pid: int) -> float:
    try:
        fields = _stat(pid)
    except OSError:  # it ended meanwhile
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_stat(int(entry.name))[1]) == pid:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_ready(name: str, url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited at startup; see {log}:\n{log.read_text()[-2000:]}")
        try:
            if httpx.get(url, timeout=1.0).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{name} did not start within {STARTUP_TIMEOUT_S:.0f} s; see {log}")


@contextmanager
def _process(
    name: str,
    argv: list[str],
    health: str,
    port: int,
    workdir: Path,
    env: dict[str, str] | None = None,
    cwd: Path = REPO,
) -> Iterator[Server]:
    """`cwd` first on sys.path: `python -m gateway.cli` imports the gateway from that tree."""
    log = workdir / f"{name}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
    try:
        _wait_ready(name, f"http://127.0.0.1:{port}{health}", process, log)
        yield Server(name, f"http://127.0.0.1:{port}", process)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def gateway_config(upstream: str, port: int, core_only: bool, redis_url: str | None = None) -> dict[str, Any]:
    """Core only: the optional stages off globally; per wire a lean model, a LiteLLM-path model, and one
    lean model per optional stage with only that stage on (its cost alone). Otherwise: defaults."""
    bases = {"openai": f"{upstream}/v1", "anthropic": upstream}
    models = []
    for wire, model in MODELS.items():
        common = {
            "provider": wire,
            "model": model,
            "api_base": bases[wire],
            "api_key_env": "BENCH_UPSTREAM_KEY",
            "retries": 0,
        }
        models.append({"name": f"{wire}-lean", "path": "auto", **common})
        if core_only:
            models.append({"name": f"{wire}-litellm", "path": "litellm", **common})
            models += [
                {"name": f"{wire}-lean+{stage}", "path": "auto", "policy": {stage: {"enabled": True}}, **common}
                for stage in OPTIONAL_STAGES
            ]
    config: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": port,
        "models": models,
        "tenants": [{"name": "bench", "keys": [hash_key(TENANT_KEY)]}],
    }
    if core_only:
        config["policy"] = CORE_ONLY
    if redis_url:
        config["redis_url"] = redis_url
    return config


def litellm_config(upstream: str) -> dict[str, Any]:
    bases = {"openai": f"{upstream}/v1", "anthropic": upstream}
    return {
        "model_list": [
            {
                "model_name": model,
                "litellm_params": {"model": f"{wire}/{model}", "api_base": bases[wire], "api_key": UPSTREAM_KEY},
            }
            for wire, model in MODELS.items()
        ],
        "general_settings": {"master_key": LITELLM_KEY},
        "litellm_settings": {"set_verbose": False, "num_retries": 0},
    }


@dataclass(frozen=True)
class Fleet:
    upstream: Server
    gateway_core: Server
    gateway_all: Server
    litellm: Server | None
    baseline: Server | None  # the core gateway run from another source tree (before a change)
    gateway_workers: Server | None = None  # default stages, --workers N, state in a private redis-server
    # Default stages, N one-process replicas on that redis-server (a balancer hashing session ids in front)
    gateway_replicas: tuple[Server, ...] = ()


@contextmanager
def fleet(
    workdir: Path,
    with_litellm: bool = True,
    baseline_tree: Path | None = None,
    upstream_delay_s: float = 0.0,
    workers: int = 1,
) -> Iterator[Fleet]:
    python = sys.executable
    offline = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "BENCH_UPSTREAM_KEY": UPSTREAM_KEY}
    with ExitStack() as stack:
        port = free_port()
        upstream = stack.enter_context(
            _process(
                "upstream",
                [python, "-m", "bench.overhead.upstream", "--port", str(port), "--delay", str(upstream_delay_s)],
                "/health",
                port,
                workdir,
            )
        )

        def gateway(
            name: str, core_only: bool, tree: Path = REPO, redis_url: str | None = None, processes: int = 1
        ) -> Server:
            port = free_port()
            config = workdir / f"{name}.yaml"
            config.write_text(yaml.safe_dump(gateway_config(upstream.url, port, core_only, redis_url)))
            argv = [python, "-m", "gateway.cli", "serve", "--config", str(config)]
            if redis_url:  # without one a gateway runs one process (and a baseline tree may predate --workers)
                argv += ["--workers", str(processes)]
            return stack.enter_context(_process(name, argv, "/healthz", port, workdir, offline, cwd=tree))

        core, everything = gateway("gateway-core", True), gateway("gateway-all", False)
        baseline = gateway("gateway-baseline", True, baseline_tree) if baseline_tree else None
        several: Server | None = None
        replicas: tuple[Server, ...] = ()
        if workers > 1:
            # Workers share state, so they need a Redis: a private one, never one the bench did not start.
            _, redis_url = stack.enter_context(redis_server(workdir))
            several = gateway("gateway-workers", False, redis_url=redis_url, processes=workers)
            replicas = tuple(gateway(f"gateway-replica-{n}", False, redis_url=redis_url) for n in range(workers))
        litellm = None
        if with_litellm:
            port = free_port()
            config = workdir / "litellm.yaml"
            config.write_text(yaml.safe_dump(litellm_config(upstream.url)))
            argv = [
                python,
                "-m",
                "litellm.proxy.proxy_cli",
                "--config",
                str(config),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--num_workers",
                "1",
            ]
            litellm = stack.enter_context(
                _process(
                    "litellm-proxy",
                    argv,
                    "/health/liveliness",
                    port,
                    workdir,
                    {**offline, "LITELLM_LOG": "ERROR", "DISABLE_ADMIN_UI": "True"},
                )
            )
        yield Fleet(upstream, core, everything, litellm, baseline, several, replicas)
