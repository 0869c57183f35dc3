"""OpenTelemetry export: spans of every request arrive at a real OTLP/HTTP receiver, with the GenAI
semantic-convention attributes and ours, a span per stage and one for the provider call, continuing the
caller's W3C traceparent; switched on by the config file or by the standard environment variables."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.observability.otlp_receiver import ReceivedSpan, Receiver, otlp_receiver

SERVER, CLIENT = 2, 3  # opentelemetry.proto.trace.v1.Span.SpanKind


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as running:
        yield running


def spans_of(receiver: Receiver, trace_id: str, count: int) -> list[ReceivedSpan]:
    deadline = time.monotonic() + 10.0
    while len(found := receiver.of_trace(trace_id)) < count:
        assert time.monotonic() < deadline, f"{len(found)} spans of trace {trace_id} arrived"
        time.sleep(0.05)
    return found


def traced_chat(gw: RunningGateway, model: str = "gpt-4o-mini") -> tuple[str, str, httpx.Response]:
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    response = httpx.post(
        f"{gw.url}/v1/chat/completions",
        headers={
            "authorization": f"Bearer {TENANT_KEYS['acme']}",
            "traceparent": f"00-{trace_id}-{parent}-01",
            "x-session-id": "traced",
        },
        json={"model": model, "messages": [{"role": "user", "content": "[[sim:text traced]]"}]},
    )
    return trace_id, parent, response


def test_spans_arrive_with_genai_attributes_and_continue_the_callers_trace(receiver: Receiver) -> None:
    tracing = {"endpoint": receiver.url, "service_name": "cachegate-test", "batch_delay_ms": 100}
    with running_gateway(**gateway_settings(tracing=tracing)) as gw:
        trace_id, parent, response = traced_chat(gw)
        spans = spans_of(receiver, trace_id, 10)
        assert response.status_code == 200
        missing_id, _, missing = traced_chat(gw, model="no-such-model")
        failed = spans_of(receiver, missing_id, 3)
    root = next(span for span in spans if span.kind == SERVER)
    assert root.parent_span_id == parent and root.name == "chat gpt-4o-mini"
    assert root.resource["service.name"] == "cachegate-test"
    attributes = root.attributes
    assert attributes["gen_ai.system"] == "openai" and attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert attributes["gen_ai.usage.input_tokens"] > 0 and attributes["gen_ai.usage.output_tokens"] > 0
    assert "gen_ai.usage.cache_read.input_tokens" in attributes
    assert attributes["cachegate.cost_usd"] == pytest.approx(float(response.headers["x-cachegate-cost-usd"]))
    assert attributes["cachegate.request_id"] == response.headers["x-request-id"]
    assert attributes["cachegate.tenant"] == "acme" and attributes["cachegate.session"] == "traced"
    stages = {span.name for span in spans if span.parent_span_id == root.span_id}
    assert {"stage auth", "stage routing", "stage guard", "stage upstream", "stage usage"} <= stages
    upstream = next(span for span in spans if span.kind == CLIENT)
    assert upstream.parent_span_id == root.span_id and upstream.attributes["gen_ai.system"] == "openai"
    assert root.start_ns <= upstream.start_ns <= upstream.end_ns <= root.end_ns
    error = next(span for span in failed if span.kind == SERVER)
    assert missing.status_code == 404 and error.attributes["http.response.status_code"] == 404
    assert error.attributes["error.type"] == "model_not_found"


def test_the_standard_environment_variables_switch_it_on(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "gateway-from-env")
    with running_gateway(**gateway_settings(tracing={"batch_delay_ms": 100})) as gw:
        trace_id, _, _ = traced_chat(gw)
        spans = spans_of(receiver, trace_id, 5)
    assert {span.resource["service.name"] for span in spans} == {"gateway-from-env"}
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    with running_gateway(**gateway_settings(tracing={"batch_delay_ms": 100})) as gw:
        trace_id, _, _ = traced_chat(gw)
        time.sleep(0.5)
    assert receiver.of_trace(trace_id) == []


def test_the_callers_tracestate_is_not_exported(receiver: Receiver) -> None:
    # tracestate is the caller's free text (vendor keys and values): continuing its trace must not copy
    # it onto every span the gateway exports (issue #26, finding 11).
    tracing = {"endpoint": receiver.url, "batch_delay_ms": 100}
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    with running_gateway(**gateway_settings(tracing=tracing)) as gw:
        response = httpx.post(
            f"{gw.url}/v1/chat/completions",
            headers={
                "authorization": f"Bearer {TENANT_KEYS['acme']}",
                "traceparent": f"00-{trace_id}-{parent}-01",
                "tracestate": "evil=c2VjcmV0LWZyb20tdGhlLWNhbGxlcg,vendor=injected",
            },
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "[[sim:text traced]]"}]},
        )
        spans = spans_of(receiver, trace_id, 5)
    assert response.status_code == 200
    root = next(span for span in spans if span.kind == SERVER)
    assert root.parent_span_id == parent  # the caller's trace still goes on
    assert {span.trace_state for span in spans} == {""}
