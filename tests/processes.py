"""The provider simulator and the gateway as processes of their own (`cachegate sim`, `cachegate serve`),
for tests that time one request against another: in-process servers share the test's interpreter lock,
so a client's work would show up as the gateway's stall."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.servers import free_socket


def _free_port() -> int:
    sock = free_socket()
    port: int = sock.getsockname()[1]
    sock.close()
    return port


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


@contextmanager
def _running(command: list[str], url: str, what: str) -> Iterator[str]:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_healthy(process, url, what)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def simulator(admin_key: str | None = None) -> Iterator[str]:
    """The provider simulator in a process of its own; yields its base URL."""
    port = _free_port()
    command = [sys.executable, "-m", "gateway.cli", "sim", "--host", "127.0.0.1", "--port", str(port)]
    if admin_key:
        command += ["--admin-key", admin_key]
    with _running(command, f"http://127.0.0.1:{port}", "the simulator") as url:
        yield url


@contextmanager
def gateway_process(settings: dict[str, Any], folder: Path) -> Iterator[str]:
    """`cachegate serve` with `settings` written as its YAML config in `folder`; yields its base URL."""
    port = _free_port()
    config = folder / "cachegate.yaml"
    config.write_text(yaml.safe_dump({**settings, "host": "127.0.0.1", "port": port}))
    command = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)]
    with _running(command, f"http://127.0.0.1:{port}", "the gateway") as url:
        yield url
