"""Real HTTP servers for tests: any ASGI app served by uvicorn in a daemon thread on a free port."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gateway.serving import free_socket
from gateway.serving import serve_in_thread as serve_on_socket

__all__ = ["free_socket", "run_app_in_thread", "serve_on_socket"]


@contextmanager
def run_app_in_thread(app: Any, host: str = "127.0.0.1", startup_timeout_s: float = 10.0) -> Iterator[str]:
    """Serve `app` on a free port until the block exits; yields its base URL (http://host:port)."""
    with serve_on_socket(app, free_socket(host), startup_timeout_s) as url:
        yield url


@contextmanager
def threaded_http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A plain threading HTTP server on a free loopback port (a stub provider, a trap, a webhook receiver);
    yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
