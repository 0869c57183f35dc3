"""Test helpers for what reaches a provider: a trap listener, a recognisable provider key, raw requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest

from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings
from tests.servers import threaded_http_server

PROVIDER_KEY = "sk-provider-9f8e7d6c5b4a-DO-NOT-LEAK"
PROVIDER_KEY_ENV = "CACHEGATE_TEST_PROVIDER_KEY"
TRAP_REPLY = "TRAP-LISTENER-REPLY"


@dataclass
class Trap:
    """A real HTTP server on loopback that records every request it gets and answers with a marker."""

    url: str
    hits: list[str] = field(default_factory=list)


@contextmanager
def trap_listener(status: int = 400, reply: dict[str, Any] | None = None) -> Iterator[Trap]:
    """Answers every request with `status` and `reply` (default: an error echoing the marker and the key)."""
    trap = Trap(url="")

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            trap.hits.append(f"{self.command} {self.path}")
            self.rfile.read(int(self.headers.get("content-length") or 0))
            echo = f"{TRAP_REPLY} {self.headers.get('authorization')} {self.headers.get('x-api-key')}"
            body = json.dumps(reply or {"error": {"message": echo}}).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: Any) -> None:
            return

    with threaded_http_server(Handler) as trap.url:
        yield trap


def keyed_settings(path: str, monkeypatch: pytest.MonkeyPatch, **overrides: Any) -> dict[str, Any]:
    """gateway_settings(path) with every model using a recognisable provider key."""
    monkeypatch.setenv(PROVIDER_KEY_ENV, PROVIDER_KEY)
    settings = gateway_settings(path=path, **overrides)
    settings["models"] = [{**model, "api_key_env": PROVIDER_KEY_ENV} for model in settings["models"]]
    return settings


def request_body(wire: str, model: str, prompt: str, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 32}
    return {**body, **fields}


def send(
    gw: RunningGateway, wire: str, body: dict[str, Any], headers: dict[str, Any] | None = None
) -> tuple[int, str, str]:
    """POST a raw body to the gateway (streamed bodies read to the end): status, body text, headers as JSON."""
    path = "/v1/chat/completions" if wire == "openai" else "/v1/messages"
    auth = (
        {"authorization": f"Bearer {TENANT_KEYS['acme']}"} if wire == "openai" else {"x-api-key": TENANT_KEYS["acme"]}
    )
    with httpx.stream("POST", gw.url + path, json=body, headers={**auth, **(headers or {})}, timeout=30.0) as response:
        text = response.read().decode("utf-8", "replace")
        return response.status_code, text, json.dumps(dict(response.headers))


def last_provider_request(gw: RunningGateway) -> dict[str, Any]:
    """The last request the simulated provider received (keys redacted by the simulator)."""
    requests = gw.sim_requests(limit=1)
    return requests[-1] if requests else {}


def assert_refused(caught: pytest.ExceptionInfo[Any], named: str) -> None:
    """An SDK error for the gateway's refusal: 400 invalid_request_error, not retried, naming `named`."""
    error = caught.value
    assert error.status_code == 400
    assert error.response.headers.get("x-should-retry") == "false"
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error", body)
    assert detail.get("type") == "invalid_request_error", body
    assert named in detail.get("message", ""), body
