"""Recorded exchanges of the real provider APIs, replayed through the gateway against a stub provider that
answers with the recording: the request the provider gets, the answer the client gets and the bill must
match the recording (apart from the documented changes in compare.py).

Each cassette is one test: its exchanges go through in the recorded order, as one client session.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conformance.bill import provider_of, recorded_bill
from tests.conformance.cassette import CASSETTES, Exchange, corpus, load
from tests.conformance.compare import answer_of, documented_request, first_difference
from tests.conformance.stub import ReplayStub, replay_stub
from tests.gateway_harness import TENANT_KEYS, RunningGateway, running_gateway

EXCHANGES = corpus()
CASSETTE_NAMES = sorted({exchange.cassette for exchange in EXCHANGES})
PROVIDER_KEY_ENV = "CACHEGATE_CONFORMANCE_PROVIDER_KEY"


def _tool_models(exchange: Exchange) -> set[str]:
    """Models that a recorded request's provider-side tools call (Anthropic's advisor)."""
    tools = exchange.request.get("tools") or []
    return {str(tool["model"]) for tool in tools if isinstance(tool, dict) and isinstance(tool.get("model"), str)}


def _routes(stub_url: str) -> list[dict[str, Any]]:
    wanted = {(provider_of(e), e.model) for e in EXCHANGES}
    wanted |= {("anthropic", model) for e in EXCHANGES if e.wire == "anthropic" for model in _tool_models(e)}
    bases = {"openai": f"{stub_url}/v1", "anthropic": stub_url, "gemini": stub_url}
    return [
        {
            "name": model,
            "provider": provider,
            "model": model,
            "api_base": bases[provider],
            "api_key_env": PROVIDER_KEY_ENV,
            "path": "lean",
            "retries": 0,
        }
        for provider, model in sorted(wanted)
    ]


@pytest.fixture(scope="module")
def stub() -> Iterator[ReplayStub]:
    with replay_stub() as stub:
        yield stub


@pytest.fixture(scope="module")
def gateway(stub: ReplayStub) -> Iterator[RunningGateway]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv(PROVIDER_KEY_ENV, "sk-conformance-provider")
        settings = {
            "embedded_simulator": False,
            "models": _routes(stub.url),
            "max_body_bytes": 8 * 1024 * 1024,
            # The same request recorded twice with two answers must reach the stub twice.
            "policy": {"response_cache": {"enabled": False}},
        }
        with running_gateway(**settings) as gw:
            yield gw


def _path(exchange: Exchange) -> str:
    if exchange.wire == "gemini":
        method = "streamGenerateContent?alt=sse" if exchange.stream else "generateContent"
        return f"/v1beta/models/{exchange.model}:{method}"
    return {"openai": "/v1/chat/completions", "responses": "/v1/responses", "anthropic": "/v1/messages"}[exchange.wire]


def _auth(exchange: Exchange) -> dict[str, str]:
    key = TENANT_KEYS["acme"]
    return {
        "openai": {"authorization": f"Bearer {key}"},
        "responses": {"authorization": f"Bearer {key}"},
        "anthropic": {"x-api-key": key, "anthropic-version": "2023-06-01"},
        "gemini": {"x-goog-api-key": key},
    }[exchange.wire]


def _spend(gateway: RunningGateway) -> float:
    total = 0.0
    for line in gateway.metrics().splitlines():
        if line.startswith("cachegate_cost_usd_total{") and 'tenant="acme"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def _replay(gateway: RunningGateway, stub: ReplayStub, exchange: Exchange, session: str) -> list[str]:
    """The defects one exchange shows, as lines (empty: none)."""
    defects: list[str] = []
    stub.queue(exchange.status, exchange.content_type, exchange.response)
    before_requests, before_spend = len(stub.received), _spend(gateway)
    headers = {**_auth(exchange), "x-session-id": session}
    with (
        httpx.Client(timeout=60.0) as client,
        client.stream("POST", gateway.url + _path(exchange), json=exchange.request, headers=headers) as reply,
    ):
        raw = reply.read()
    received = stub.received[before_requests:]
    stub.answers.clear()
    if len(received) != 1:
        return [f"the provider got {len(received)} requests (status {reply.status_code}: {raw[:300]!r})"]
    recorded, sent = documented_request(exchange, received[0].body)
    if found := first_difference(recorded, sent):
        defects.append(f"request: {found}")
    if reply.status_code != exchange.status:
        defects.append(f"status {reply.status_code}, recorded {exchange.status}")
    try:
        answer = answer_of(exchange, raw)
    except ValueError:
        answer = raw[:300]
    if found := first_difference(answer_of(exchange, exchange.response), answer):
        defects.append(f"answer: {found}")
    billed, charged = recorded_bill(exchange), _spend(gateway) - before_spend
    if billed is not None and not math.isclose(billed, charged, rel_tol=1e-6, abs_tol=1e-9):
        defects.append(f"bill: the provider billed ${billed:.6f}, the gateway charged ${charged:.6f}")
    return defects


@pytest.mark.parametrize("cassette", CASSETTE_NAMES)
def test_recorded_exchanges_pass_through_unchanged_and_billed_exactly(
    gateway: RunningGateway, stub: ReplayStub, cassette: str
) -> None:
    session = f"conformance-{uuid.uuid4().hex}"
    defects = [
        f"{exchange.name} ({exchange.wire}, {exchange.model}{', stream' if exchange.stream else ''}): {defect}"
        for exchange in load(CASSETTES / f"{cassette}.yaml")
        if exchange in EXCHANGES
        for defect in _replay(gateway, stub, exchange, session)
    ]
    assert not defects, "\n".join(defects)


def test_the_corpus_covers_every_wire_streamed_and_not() -> None:
    kinds = {(exchange.wire, exchange.stream) for exchange in EXCHANGES}
    assert kinds == {(wire, stream) for wire in ("openai", "responses", "anthropic", "gemini") for stream in (0, 1)}
