"""The provider simulator and the gateway as processes of their own (`cachegate sim`, `cachegate serve`),
for tests that time one request against another: in-process servers share the test's interpreter lock,
so a client's work would show up as the gateway's stall."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.ports import spawn_port


def _wait_healthy(process: subprocess.Popen[bytes], url: str, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, f"{what} did not start"
        time.sleep(0.1)


@dataclass(frozen=True)
class Launch:
    """A process to start: its command line, the base URL it will answer on, and what it is (for errors)."""

    command: list[str]
    url: str
    what: str


@contextmanager
def running(*launches: Launch) -> Iterator[list[str]]:
    """Every launch started at once, then waited for: their start-ups (mostly imports) overlap on the
    machine's cores instead of adding up. Yields their base URLs, in order; all are stopped on exit."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for launch in launches:
            processes.append(subprocess.Popen(launch.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for process, launch in zip(processes, launches, strict=True):
            _wait_healthy(process, launch.url, launch.what)
        yield [launch.url for launch in launches]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=10)


def simulator_launch(admin_key: str | None = None) -> Launch:
    """The provider simulator on a free port."""
    port = spawn_port()
    command = [sys.executable, "-m", "gateway.cli", "sim", "--host", "127.0.0.1", "--port", str(port)]
    if admin_key:
        command += ["--admin-key", admin_key]
    return Launch(command, f"http://127.0.0.1:{port}", "the simulator")


def gateway_launch(settings: dict[str, Any], folder: Path) -> Launch:
    """`cachegate serve` on a free port, with `settings` written as its YAML config in `folder`."""
    port = spawn_port()
    config = folder / "cachegate.yaml"
    config.write_text(yaml.safe_dump({**settings, "host": "127.0.0.1", "port": port}))
    command = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)]
    return Launch(command, f"http://127.0.0.1:{port}", "the gateway")


@contextmanager
def simulator(admin_key: str | None = None) -> Iterator[str]:
    """The provider simulator in a process of its own; yields its base URL."""
    with running(simulator_launch(admin_key)) as (url,):
        yield url


@contextmanager
def gateway_process(settings: dict[str, Any], folder: Path) -> Iterator[str]:
    """`cachegate serve` with `settings` written as its YAML config in `folder`; yields its base URL."""
    with running(gateway_launch(settings, folder)) as (url,):
        yield url
