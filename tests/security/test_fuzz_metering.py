"""Fuzz every endpoint on both upstream paths with hostile tool types, provider-side ids and sizes.

What must hold for every generated request (the done-criterion of the second security review):
- no upstream call goes to an address or a model the operator did not configure (a trap listener named
  by the hostile tools gets nothing; the simulated provider sees only configured models);
- no provider call escapes metering: the tokens the provider billed (the simulator's own counters) equal
  the tokens the gateway charged (its `cachegate_tokens_total` counters), and every billed call costs money;
- no 5xx, whatever the request;
- no stall over 0.5 s for another tenant: a second tenant's small requests keep answering while the
  hostile ones are processed.
"""

from __future__ import annotations

import json
import random
import string
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.gateway_harness import ADMIN_HEADERS, ADMIN_KEY, TENANT_KEYS
from tests.processes import gateway_process, running, simulator_launch
from tests.security.upstream_probe import Trap, keyed_settings, trap_listener

CONFIGURED_MODELS = {"gpt-4o-mini", "claude-sonnet-4-5", "gpt-4.1-mini", "gemini-2.5-flash"}
CASES_PER_ENDPOINT = 14
STALL_LIMIT_S = 0.5
SEED = 20261127
PROBE_MODEL = "probe-gpt-4o-mini"  # the other tenant's route, on a provider of its own


def hostile_tools(rng: random.Random, url: str) -> list[dict[str, Any]]:
    """Provider-side tools of every wire, several naming a model, a URL or a credential."""
    catalogue: list[dict[str, Any]] = [
        {"type": "advisor_20260301", "name": "advisor", "model": "anthropic/claude-opus-4-1", "max_uses": 200},
        {"type": "advisor_20260301", "model": f"openai/gpt-5?api_base={url}"},
        {"type": "mcp", "server_label": "x", "server_url": url, "authorization": "Bearer stolen"},
        {"type": "mcp", "server_label": "y", "connector_id": "connector_gmail", "headers": {"x": "1"}},
        {"type": "url", "url": url, "name": "mcp", "authorization_token": "t"},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 500},
        {"type": "web_fetch_20250910", "name": "web_fetch", "allowed_domains": ["127.0.0.1"]},
        {"type": "code_execution_20250825", "name": "code_execution"},
        {"type": "computer_20250124", "name": "computer", "display_width_px": 1024, "display_height_px": 768},
        {"type": "bash_20250124", "name": "bash"},
        {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
        {"type": "memory_20250818", "name": "memory"},
        {"type": "file_search", "vector_store_ids": ["vs_other_tenant"]},
        {"type": "web_search_preview", "search_context_size": "high"},
        {"type": "image_generation", "model": "gpt-image-1"},
        {"type": "code_interpreter", "container": {"type": "auto", "file_ids": ["file-other"]}},
        {"type": "local_shell"},
        {"type": "custom", "name": "free_text", "description": "d"},
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}},
        {"name": "g", "description": "d", "input_schema": {"type": "object", "properties": {}}},
        {"type": "totally_unknown_tool_v9", "endpoint": url, "api_key": "k"},
    ]
    return rng.sample(catalogue, rng.randint(1, 4))


def hostile_ids(rng: random.Random) -> dict[str, Any]:
    """Provider-side ids another tenant might own, and `store`."""
    choices: list[dict[str, Any]] = [
        {"previous_response_id": f"resp_{uuid.uuid4().hex}"},
        {"conversation": f"conv_{uuid.uuid4().hex}"},
        {"conversation": {"id": f"conv_{uuid.uuid4().hex}"}},
        {"prompt": {"id": f"pmpt_{uuid.uuid4().hex}", "version": "2"}},
        {"container": f"container_{uuid.uuid4().hex}"},
        {"store": True},
        {"metadata": {"user_id": "\x00" * 3 + "}" * 50}},
        {},
    ]
    picked: dict[str, Any] = {}
    for choice in rng.sample(choices, rng.randint(0, 3)):
        picked.update(choice)
    return picked


def hostile_text(rng: random.Random) -> str:
    """Mostly small; now and then hundreds of KB of letters with no space (tiktoken's worst case)."""
    marker = f"fuzz {uuid.uuid4().hex} "
    roll = rng.random()
    if roll < 0.12:
        return marker + "".join(rng.choices(string.ascii_letters, k=rng.randint(200_000, 600_000)))
    if roll < 0.2:
        return marker + "\u202e\x00\ud7ff" * rng.randint(1, 2000)
    return marker + " ".join(rng.choices(["what", "is", "2+2", "loop", "tool", "é", "🙂"], k=rng.randint(1, 40)))


def many_messages(rng: random.Random, text: str) -> list[dict[str, Any]]:
    if rng.random() < 0.1:
        count = rng.randint(2_000, 20_000)
        return [{"role": "user" if i % 2 == 0 else "assistant", "content": "x"} for i in range(count)] + [
            {"role": "user", "content": text}
        ]
    return [{"role": "user", "content": text}]


@dataclass(frozen=True)
class Endpoint:
    name: str
    method_path: Callable[[str, bool], str]  # (model, stream) -> path
    body: Callable[[random.Random, str, str, bool], dict[str, Any]]  # (rng, model, trap url, stream) -> body
    auth: Callable[[str], dict[str, str]]
    streams: bool = True


def _bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def _x_api_key(key: str) -> dict[str, str]:
    return {"x-api-key": key}


def _goog(key: str) -> dict[str, str]:
    return {"x-goog-api-key": key}


def _chat(rng: random.Random, model: str, url: str, stream: bool) -> dict[str, Any]:
    text = hostile_text(rng)
    return {
        "model": model,
        "messages": many_messages(rng, text),
        "max_tokens": 16,
        "stream": stream,
        "tools": hostile_tools(rng, url),
        **hostile_ids(rng),
    }


def _messages(rng: random.Random, model: str, url: str, stream: bool) -> dict[str, Any]:
    text = hostile_text(rng)
    messages = many_messages(rng, text)
    return {
        "model": model,
        "messages": messages,
        "max_tokens": 16,
        "stream": stream,
        "tools": hostile_tools(rng, url),
        **hostile_ids(rng),
    }


def _responses(rng: random.Random, model: str, url: str, stream: bool) -> dict[str, Any]:
    text = hostile_text(rng)
    items: list[Any] = [{"role": "user", "content": text}]
    if rng.random() < 0.3:
        items.insert(0, {"type": "item_reference", "id": f"msg_{uuid.uuid4().hex}"})
    return {
        "model": model,
        "input": items,
        "max_output_tokens": 16,
        "stream": stream,
        "tools": hostile_tools(rng, url),
        **hostile_ids(rng),
    }


def _gemini(rng: random.Random, model: str, url: str, stream: bool) -> dict[str, Any]:
    text = hostile_text(rng)
    declarations = [{"name": "f", "description": "d", "parameters": {"type": "OBJECT", "properties": {}}}]
    tools: list[dict[str, Any]] = [{"functionDeclarations": declarations}]
    tools += rng.sample(
        [
            {"googleSearch": {}},
            {"urlContext": {}},
            {"codeExecution": {}},
            {"retrieval": {"vertexRagStore": {"ragCorpora": [url]}}},
        ],
        rng.randint(0, 2),
    )
    body: dict[str, Any] = {
        "contents": [{"role": "user", "parts": [{"text": text}]}],
        "tools": tools,
        "generationConfig": {"maxOutputTokens": 16},
    }
    if rng.random() < 0.3:
        body["cachedContent"] = f"cachedContents/{uuid.uuid4().hex}"
    return body


def _count_tokens(rng: random.Random, model: str, url: str, stream: bool) -> dict[str, Any]:
    return {"model": model, "messages": many_messages(rng, hostile_text(rng)), "tools": hostile_tools(rng, url)}


def _gemini_count(rng: random.Random, model: str, url: str, stream: bool) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": hostile_text(rng)}]}]}


def _embeddings(rng: random.Random, model: str, url: str, stream: bool) -> dict[str, Any]:
    texts = [hostile_text(rng) for _ in range(rng.randint(1, 3))]
    return {"model": model, "input": texts if rng.random() < 0.5 else texts[0], **hostile_ids(rng)}


def _completions(rng: random.Random, model: str, url: str, stream: bool) -> dict[str, Any]:
    return {"model": model, "prompt": hostile_text(rng), "max_tokens": 16, "stream": stream, **hostile_ids(rng)}


ENDPOINTS = [
    Endpoint("chat", lambda model, stream: "/v1/chat/completions", _chat, _bearer),
    Endpoint("messages", lambda model, stream: "/v1/messages", _messages, _x_api_key),
    Endpoint("responses", lambda model, stream: "/v1/responses", _responses, _bearer),
    Endpoint(
        "gemini",
        lambda model, stream: (
            f"/v1beta/models/{model}:" + ("streamGenerateContent?alt=sse" if stream else "generateContent")
        ),
        _gemini,
        _goog,
    ),
    Endpoint("count_tokens", lambda model, stream: "/v1/messages/count_tokens", _count_tokens, _x_api_key, False),
    Endpoint("gemini_count", lambda model, stream: f"/v1beta/models/{model}:countTokens", _gemini_count, _goog, False),
    Endpoint("embeddings", lambda model, stream: "/v1/embeddings", _embeddings, _bearer, False),
    Endpoint("completions", lambda model, stream: "/v1/completions", _completions, _bearer),
]
MODELS = ["gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-flash"]


@dataclass(frozen=True)
class Case:
    name: str
    path: str
    headers: dict[str, str]
    body: bytes


def hostile_cases(trap_url: str) -> Iterator[Case]:
    """CASES_PER_ENDPOINT requests for every endpoint, the same on every run (seeded)."""
    rng = random.Random(SEED)
    for endpoint in ENDPOINTS:
        for number in range(CASES_PER_ENDPOINT):
            model = rng.choice(MODELS)
            stream = endpoint.streams and rng.random() < 0.5
            body = json.dumps(endpoint.body(rng, model, trap_url, stream)).encode()
            headers = {"content-type": "application/json", **endpoint.auth(TENANT_KEYS["acme"])}
            name = f"{endpoint.name} case {number} ({model}, stream={stream})"
            yield Case(name, endpoint.method_path(model, stream), headers, body)


@dataclass
class StallProbe:
    """Another tenant's small requests, one after another, for as long as the fuzz runs."""

    url: str
    latencies: list[tuple[float, str]] = field(default_factory=list)  # (seconds, the hostile case then sent)
    failures: list[str] = field(default_factory=list)
    sending: str = "-"
    _stop: threading.Event = field(default_factory=threading.Event)

    def ask(self, client: httpx.Client) -> int:
        body = {"model": PROBE_MODEL, "max_tokens": 4, "messages": [{"role": "user", "content": uuid.uuid4().hex}]}
        return client.post(
            self.url + "/v1/chat/completions", json=body, headers=_bearer(TENANT_KEYS["globex"])
        ).status_code

    def run(self) -> None:
        with httpx.Client(timeout=30.0) as client:
            self.ask(client)  # the first one warms the route up, untimed
            while not self._stop.is_set():
                started, during = time.perf_counter(), self.sending
                status = self.ask(client)
                self.latencies.append((time.perf_counter() - started, during))
                if status != 200:
                    self.failures.append(f"probe answered {status}")
                self._stop.wait(0.05)

    def stop(self) -> None:
        self._stop.set()


def _tokens_charged(metrics: str, tenant: str) -> float:
    total = 0.0
    for line in metrics.splitlines():
        if line.startswith("cachegate_tokens_total{") and f'tenant="{tenant}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def _cost_charged(metrics: str, tenant: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("cachegate_cost_usd_total{") and f'tenant="{tenant}"' in line
    )


def _tokens_billed(every: list[dict[str, Any]]) -> tuple[float, set[str]]:
    kinds = ("input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens")
    models = [(model, counter) for stats in every for model, counter in stats.get("models", {}).items()]
    billed = sum(counter.get(kind, 0) for _, counter in models for kind in kinds)
    return billed, {model for model, counter in models if counter.get("requests")}


@pytest.fixture(scope="module")
def trap() -> Iterator[Trap]:
    with trap_listener() as trap:
        yield trap


@dataclass(frozen=True)
class Deployment:
    """The gateway and the provider simulator, each in a process of its own."""

    url: str
    sims: tuple[str, ...]

    def metrics(self) -> str:
        reply = httpx.get(f"{self.url}/metrics", headers=ADMIN_HEADERS)
        reply.raise_for_status()
        return reply.text

    def sim_stats(self) -> list[dict[str, Any]]:
        """Each simulator's counters."""
        replies = [httpx.get(f"{sim}/sim/stats", headers=ADMIN_HEADERS) for sim in self.sims]
        for reply in replies:
            reply.raise_for_status()
        return [reply.json() for reply in replies]


@pytest.fixture(scope="module")
def sims() -> Iterator[tuple[str, str]]:
    """The provider simulator and the other tenant's, started together, for both gateways (each starts on
    them reset: no counter, cache or fault of the one before)."""
    with running(simulator_launch(ADMIN_KEY), simulator_launch(ADMIN_KEY)) as (sim, probe_sim):
        yield sim, probe_sim


@pytest.fixture(scope="module", params=["lean", "litellm"])
def gateway(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, sims: tuple[str, str]
) -> Iterator[Deployment]:
    sim, probe_sim = sims
    for url in sims:
        httpx.post(f"{url}/sim/reset", headers=ADMIN_HEADERS).raise_for_status()
    with pytest.MonkeyPatch.context() as monkeypatch:
        settings = keyed_settings(request.param, monkeypatch, max_body_bytes=8 * 1024 * 1024)
        bases = {"openai": f"{sim}/v1", "anthropic": sim, "gemini": f"{sim}/v1beta"}
        settings["models"] = [{**model, "api_base": bases[model["provider"]]} for model in settings["models"]]
        # The other tenant's provider is a process of its own: a provider slowed by a huge request is the
        # provider's business; what is timed is the gateway.
        probe_route = {"name": PROBE_MODEL, "provider": "openai", "model": "gpt-4o-mini", "api_base": f"{probe_sim}/v1"}
        settings["models"].append({**probe_route, "api_key_env": settings["models"][0]["api_key_env"]})
        settings["embedded_simulator"] = False
        # Caching off: every request is a provider call, so billed and charged tokens must match one to one.
        settings["policy"] = {"response_cache": {"enabled": False}}
        with gateway_process(settings, tmp_path_factory.mktemp(request.param)) as url:
            yield Deployment(url, (sim, probe_sim))


PLAIN: dict[str, Callable[[str, bool], dict[str, Any]]] = {
    "chat": lambda model, stream: {"model": model, "messages": WARM, "max_tokens": 4, "stream": stream},
    "messages": lambda model, stream: {"model": model, "messages": WARM, "max_tokens": 4, "stream": stream},
    "responses": lambda model, stream: {"model": model, "input": "warm", "max_output_tokens": 16, "stream": stream},
    "gemini": lambda model, stream: {"contents": [{"role": "user", "parts": [{"text": "warm"}]}]},
    "count_tokens": lambda model, stream: {"model": model, "messages": WARM},
    "gemini_count": lambda model, stream: {"contents": [{"role": "user", "parts": [{"text": "warm"}]}]},
    "embeddings": lambda model, stream: {"model": model, "input": "warm"},
    "completions": lambda model, stream: {"model": model, "prompt": "warm", "max_tokens": 4, "stream": stream},
}
WARM = [{"role": "user", "content": "warm"}]


def warm_up(url: str) -> None:
    """One plain request per endpoint, route and stream mode first: the first call of a path imports and
    builds what it needs once per process (LiteLLM's provider modules), which is start-up, not one tenant
    slowing another."""
    headers = {"content-type": "application/json"}
    for endpoint in ENDPOINTS:
        for model in MODELS:
            for stream in {False, endpoint.streams}:
                body = json.dumps(PLAIN[endpoint.name](model, stream))
                auth = endpoint.auth(TENANT_KEYS["acme"])
                httpx.post(
                    url + endpoint.method_path(model, stream), content=body, headers={**headers, **auth}, timeout=60
                )


@pytest.mark.slow
def test_hostile_requests_are_metered_contained_and_never_stall_others(gateway: Deployment, trap: Trap) -> None:
    cases = list(hostile_cases(trap.url))  # made before the clock starts: the client's work is not timed
    warm_up(gateway.url)
    problems: list[str] = []
    probe = StallProbe(gateway.url)
    thread = threading.Thread(target=probe.run, daemon=True)
    thread.start()
    sent = 0
    try:
        with httpx.Client(timeout=60.0) as client:
            for case in cases:
                probe.sending = case.name
                with client.stream("POST", gateway.url + case.path, content=case.body, headers=case.headers) as reply:
                    reply.read()
                sent += 1
                if reply.status_code >= 500:
                    problems.append(f"{case.name}: {reply.status_code} {reply.text[:200]}")
    finally:
        probe.stop()
        thread.join(timeout=30)
    billed, models_called = _tokens_billed(gateway.sim_stats())
    metrics = gateway.metrics()
    charged = _tokens_charged(metrics, "acme")
    assert sent == len(ENDPOINTS) * CASES_PER_ENDPOINT
    assert not trap.hits, f"an upstream call went to an address no route names: {trap.hits}"
    assert models_called <= CONFIGURED_MODELS, f"models called that no route names: {models_called}"
    assert not problems, "\n".join(problems)
    assert probe.latencies and not probe.failures, probe.failures[:5]
    assert charged + _tokens_charged(metrics, "globex") == billed, (
        f"the provider billed {billed} tokens, the gateway charged {charged} (acme) + "
        f"{_tokens_charged(metrics, 'globex')} (globex)"
    )
    assert _cost_charged(metrics, "acme") > 0
    worst, during = max(probe.latencies)
    assert worst < STALL_LIMIT_S, f"another tenant waited {worst:.2f} s (limit {STALL_LIMIT_S} s) during {during}"
