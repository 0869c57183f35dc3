"""Real HTTP servers for tests: any ASGI app served by uvicorn in a daemon thread on a free port."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


def free_socket(host: str = "127.0.0.1") -> socket.socket:
    """A listening-ready socket on a free port; binding it first means no race for the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    return sock


@contextmanager
def serve_on_socket(app: Any, sock: socket.socket, startup_timeout_s: float = 10.0) -> Iterator[str]:
    """Serve `app` on `sock` until the block exits; yields its base URL (http://host:port)."""
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1, lifespan="auto")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()


@contextmanager
def run_app_in_thread(app: Any, host: str = "127.0.0.1", startup_timeout_s: float = 10.0) -> Iterator[str]:
    """Serve `app` on a free port until the block exits; yields its base URL (http://host:port)."""
    with serve_on_socket(app, free_socket(host), startup_timeout_s) as url:
        yield url
