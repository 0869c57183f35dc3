"""A provider stub on loopback that answers with a recording: the next queued response, whatever it is
asked, and keeps each request it received (path, headers, body) for the test to compare."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers import threaded_http_server


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ReplayStub:
    url: str = ""
    answers: deque[tuple[int, str, bytes]] = field(default_factory=deque)
    received: list[Recorded] = field(default_factory=list)

    def queue(self, status: int, content_type: str, body: bytes) -> None:
        self.answers.append((status, content_type, body))


@contextmanager
def replay_stub() -> Iterator[ReplayStub]:
    stub = ReplayStub()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            stub.received.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            status, content_type, answer = (
                stub.answers.popleft() if stub.answers else (500, "application/json", b'{"error": "no answer"}')
            )
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            return

    with threaded_http_server(Handler) as stub.url:
        yield stub
