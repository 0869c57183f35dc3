"""`cachegate serve --workers N`: N gateway processes on one port, sharing their state through Redis.

Each worker is a replica in all but address: guard strikes, caches, budgets, rate limits, keys and
request records are in the shared store, so any worker may serve any request. What is per process and
must be joined is the metrics: prometheus_client's multiprocess mode keeps every worker's samples in
files of one directory, and /metrics reads them all (gateway/metrics.py, `GatewayMetrics.exposition`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from gateway import collector
from gateway.metrics import MULTIPROCESS_DIR_ENV

if TYPE_CHECKING:
    from fastapi import FastAPI

    from gateway.config import Settings

# Connections the kernel holds for the gateway before it accepts them (capped by net.core.somaxconn).
# uvicorn's 2,048 overflowed in a burst of new connections at 1,000 req/s: the kernel then drops the
# handshake's last packet, and a connection it never accepts is reset ~15 s later.
LISTEN_BACKLOG = 16384

# The worker factory reads its configuration from here (uvicorn starts workers by import string).
CONFIG_ENV = "CACHEGATE_WORKER_CONFIG"


class WorkersRefused(ValueError):
    """A worker count this configuration cannot run correctly."""


def available_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worker_count(requested: int | None, settings: Settings) -> int:
    """The number of workers to run. Default: one per core when the state is shared in Redis, else one
    (in-process state is per worker: a guard strike or a cached answer in one would be unknown to the
    others)."""
    shared = settings.redis_url is not None
    if requested is None:
        return available_cores() if shared else 1
    if requested < 1:
        raise WorkersRefused(f"--workers must be at least 1, got {requested}")
    if requested > 1 and not shared:
        raise WorkersRefused(
            f"--workers {requested} needs shared state: set redis_url (or CACHEGATE_REDIS_URL); "
            "without Redis each worker would keep its own guard, caches and budgets"
        )
    return requested


@contextmanager
def metrics_directory() -> Iterator[str]:
    """A fresh directory for the workers' metric files, removed when serving ends. An operator's own
    PROMETHEUS_MULTIPROC_DIR is used as given (and emptied: samples of an earlier run would be added in)."""
    given = os.environ.get(MULTIPROCESS_DIR_ENV)
    path = given or tempfile.mkdtemp(prefix="cachegate-metrics-")
    if given:
        os.makedirs(given, exist_ok=True)
        for name in os.listdir(given):
            if name.endswith(".db"):
                os.remove(os.path.join(given, name))
    # Set before any worker imports prometheus_client: its value class is chosen at import.
    os.environ[MULTIPROCESS_DIR_ENV] = path
    try:
        yield path
    finally:
        if not given:
            shutil.rmtree(path, ignore_errors=True)


def worker_app() -> FastAPI:
    """The app of one worker (uvicorn's factory): the parent's configuration, read from the environment."""
    from prometheus_client import multiprocess

    from gateway.app import create_app
    from gateway.config import load_settings

    # A worker that ends takes its live gauges (requests in flight, active sessions) with it.
    atexit.register(multiprocess.mark_process_dead, os.getpid())
    config_file = os.environ.get(CONFIG_ENV) or None
    app = create_app(load_settings(config_file), config_file)  # each worker watches the file (gateway/live/)
    collector.take_over(app)
    return app


def run_workers(settings: Settings, config_path: str | None, workers: int) -> None:
    import uvicorn

    # Workers are fresh interpreters: what they need from the command line goes through the environment
    # (host and port as the CACHEGATE_* settings they are).
    os.environ[CONFIG_ENV] = config_path or ""
    os.environ["CACHEGATE_HOST"] = settings.host
    os.environ["CACHEGATE_PORT"] = str(settings.port)
    with metrics_directory():
        uvicorn.run("gateway.workers:worker_app", factory=True, workers=workers, **server_options(settings))


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for one process or several."""
    return {
        "host": settings.host,
        "port": settings.port,
        "log_level": "warning",
        "access_log": False,
        "timeout_keep_alive": settings.keep_alive_s,
        "backlog": LISTEN_BACKLOG,
    }
