"""A real webhook receiver on loopback: records every POST (headers, body) and answers with the statuses it
is told to, in order (then 200), optionally redirecting elsewhere."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers import threaded_http_server


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data

    @property
    def event(self) -> str:
        return str(self.json["cachegate"]["event"])


@dataclass
class Receiver:
    url: str = ""
    statuses: list[int] = field(default_factory=list)  # answers still to give, in order (then 200)
    redirect_to: str | None = None
    deliveries: list[Delivery] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def events(self, kind: str) -> list[Delivery]:
        with self.lock:
            return [d for d in self.deliveries if d.event == kind]

    def wait_for(self, kind: str, count: int = 1, timeout_s: float = 15.0, settle_s: float = 1.0) -> list[Delivery]:
        """The deliveries of `kind` once `count` arrived, and then `settle_s` more (so a duplicate shows)."""
        return self._settled({kind: count}, timeout_s, settle_s)[kind]

    def wait_for_each(self, *kinds: str, timeout_s: float = 15.0, settle_s: float = 1.0) -> list[list[Delivery]]:
        """The deliveries of each kind once one of every kind arrived, and then `settle_s` more: one settle for
        all, read after it, so a duplicate of any shows as it would after its own."""
        found = self._settled(dict.fromkeys(kinds, 1), timeout_s, settle_s)
        return [found[kind] for kind in kinds]

    def _settled(self, counts: dict[str, int], timeout_s: float, settle_s: float) -> dict[str, list[Delivery]]:
        deadline = time.monotonic() + timeout_s
        while any(len(self.events(kind)) < count for kind, count in counts.items()) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(settle_s)
        return {kind: self.events(kind) for kind in counts}


@contextmanager
def webhook_receiver(statuses: list[int] | None = None, redirect_to: str | None = None) -> Iterator[Receiver]:
    receiver = Receiver(statuses=list(statuses or []), redirect_to=redirect_to)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            with receiver.lock:
                receiver.deliveries.append(Delivery(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
            if receiver.redirect_to is not None:
                self.send_response(307)
                self.send_header("location", receiver.redirect_to)
            else:
                self.send_response(status)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            return

    with threaded_http_server(Handler) as url:
        receiver.url = f"{url}/hooks/cachegate"
        yield receiver
