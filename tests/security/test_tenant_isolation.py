"""Prompt-cache side channel between tenants (issue #11, item 14): per-tenant provider keys on every upstream
path (fallbacks and compaction summaries included), and a tenant-namespaced OpenAI prompt_cache_key.

The provider is a real loopback HTTP listener that records what each call carried.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from gateway.config import hash_key
from tests.compaction.sessions import TOOLS_OPENAI, openai_history
from tests.gateway_harness import TENANT_KEYS, RunningGateway, running_gateway

KEYS = {"acme": "sk-provider-acme", "globex": "sk-provider-globex", "shared": "sk-provider-shared"}
ENV = {"acme": "CG_TEST_PROVIDER_KEY_ACME", "globex": "CG_TEST_PROVIDER_KEY_GLOBEX", "shared": "CG_TEST_PROVIDER_KEY"}
HELLO = [{"role": "user", "content": "hello"}]


class Provider(BaseHTTPRequestHandler):
    """OpenAI chat completions at /v1; every call under /down/v1 fails with a retryable 500."""

    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        Provider.calls.append({"path": self.path, "authorization": self.headers.get("authorization"), "body": body})
        if self.path.startswith("/down/"):
            self._send(500, {"error": {"message": "down", "type": "server_error"}})
            return
        answer = {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "gpt-4o-mini"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
        }
        self._send(200, answer)

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def gw(provider: str) -> Iterator[RunningGateway]:
    patch = pytest.MonkeyPatch()
    for who, env in ENV.items():
        patch.setenv(env, KEYS[who])

    def model(name: str, path: str, base: str, **extra: Any) -> dict[str, Any]:
        common = {"provider": "openai", "model": "gpt-4o-mini", "api_key_env": ENV["shared"], "retries": 0}
        return {"name": name, "path": path, "api_base": f"{provider}{base}", **common, **extra}

    models = [
        model("lean", "lean", "/v1"),
        model("litellm", "litellm", "/v1"),
        model("backup", "lean", "/v1"),
        model("lean-no-prompt-cache", "lean", "/v1", policy={"prompt_cache": {"enabled": False}}),
        model("small-window", "lean", "/v1", context_window=8000),  # compaction summarizes long histories
        model("primary-down", "lean", "/down/v1", fallbacks=["backup"]),
    ]
    tenants = [
        {"name": who, "keys": [hash_key(TENANT_KEYS[who])], "provider_keys": {"openai": ENV[who]}}
        for who in ("acme", "globex")
    ]
    policy = {"response_cache": {"enabled": False}}
    with running_gateway(models=models, tenants=tenants, policy=policy) as gateway:
        yield gateway
    patch.undo()


def _call(gw: RunningGateway, tenant: str, model: str, **extra: Any) -> dict[str, Any]:
    Provider.calls.clear()
    completion = gw.openai(tenant).chat.completions.create(model=model, messages=HELLO, **extra)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "ok"
    return Provider.calls[-1]


@pytest.mark.parametrize("model", ["lean", "litellm"])
def test_each_tenant_calls_with_its_own_provider_key(gw: RunningGateway, model: str) -> None:
    for tenant in ("acme", "globex"):
        call = _call(gw, tenant, model)
        assert call["authorization"] == f"Bearer {KEYS[tenant]}"


def test_fallbacks_keep_the_tenants_key(gw: RunningGateway) -> None:
    for tenant in ("acme", "globex"):
        Provider.calls.clear()
        gw.openai(tenant).chat.completions.create(model="primary-down", messages=HELLO)  # type: ignore[arg-type]
        assert [c["path"].startswith("/down/") for c in Provider.calls] == [True, False]  # failed, then fell back
        assert {c["authorization"] for c in Provider.calls} == {f"Bearer {KEYS[tenant]}"}


@pytest.mark.parametrize("model", ["lean", "litellm"])
def test_prompt_cache_key_is_namespaced_per_tenant(gw: RunningGateway, model: str) -> None:
    sent = {t: _call(gw, t, model, extra_body={"prompt_cache_key": "team-bucket"}) for t in ("acme", "globex")}
    keys = {t: call["body"].get("prompt_cache_key") for t, call in sent.items()}
    assert keys["acme"] and keys["globex"] and keys["acme"] != keys["globex"]
    assert "team-bucket" not in json.dumps([c["body"] for c in sent.values()])
    # Stable: a tenant's own requests keep sharing their bucket.
    again = _call(gw, "acme", model, extra_body={"prompt_cache_key": "team-bucket"})
    assert again["body"]["prompt_cache_key"] == keys["acme"]


def test_prompt_cache_key_is_namespaced_with_the_prompt_cache_stage_off(gw: RunningGateway) -> None:
    sent = {
        t: _call(gw, t, "lean-no-prompt-cache", extra_body={"prompt_cache_key": "team-bucket"})
        for t in ("acme", "globex")
    }
    keys = {t: call["body"].get("prompt_cache_key") for t, call in sent.items()}
    assert keys["acme"] != keys["globex"] and "team-bucket" not in keys.values()


def test_compaction_summaries_use_the_tenants_key(gw: RunningGateway) -> None:
    for tenant in ("acme", "globex"):
        Provider.calls.clear()
        client = gw.openai(tenant)
        for step in range(1, 17):
            raw = client.chat.completions.with_raw_response.create(
                model="small-window",
                messages=openai_history(step, words=17),  # type: ignore[arg-type]
                tools=TOOLS_OPENAI,  # type: ignore[arg-type]
                extra_headers={"x-session-id": f"isolated-{tenant}"},
            )
            if raw.headers.get("x-cachegate-compaction-summary") == "written":
                break
        summaries = [c for c in Provider.calls if c["body"].get("tool_choice") == "none"]
        assert summaries, "no summary was written"
        assert {c["authorization"] for c in Provider.calls} == {f"Bearer {KEYS[tenant]}"}
