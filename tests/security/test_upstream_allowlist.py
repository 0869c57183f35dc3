"""Only each API's public body fields reach a provider, on both upstream paths and across wires.

LiteLLM reads its own keyword arguments (base_url, api_base, api_key, extra_headers, mock_response,
model_list ...) from the same dict as the body: a caller's field of that name chose where the gateway
connected and sent the gateway's provider key there.
"""

from __future__ import annotations

import logging
import typing
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from anthropic.types import message_create_params as anthropic_params
from anthropic.types.beta import message_create_params as anthropic_beta_params
from openai.types.chat import completion_create_params as openai_params

from gateway.wire import WIRES
from tests.gateway_harness import RunningGateway, running_gateway
from tests.security.upstream_probe import (
    PROVIDER_KEY,
    TRAP_REPLY,
    Trap,
    keyed_settings,
    last_provider_request,
    request_body,
    send,
    trap_listener,
)

MOCKED = "MOCKED-ANSWER-FROM-CALLER"

# LiteLLM keyword arguments (and a few of its private flags) a caller could try to set through the body.
HOSTILE_FIELDS: dict[str, Callable[[str, str], Any]] = {
    "base_url": lambda url, model: url,
    "api_base": lambda url, model: url,
    "api_key": lambda url, model: "sk-attacker-chosen",
    "custom_llm_provider": lambda url, model: "openai",
    "extra_headers": lambda url, model: {"x-trap-header": "1"},
    "headers": lambda url, model: {"x-trap-header": "1"},
    "mock_response": lambda url, model: MOCKED,
    "model_list": lambda url, model: [
        {"model_name": model, "litellm_params": {"model": "openai/gpt-4o-mini", "api_base": url}}
    ],
    "litellm_metadata": lambda url, model: {"model_group": "x", "model_info": {"id": "x"}},
    "context_window_fallback_dict": lambda url, model: {model: "openai/gpt-4o-mini"},
    "api_version": lambda url, model: "2099-01-01",
    "organization": lambda url, model: "org-attacker",
    "input_cost_per_token": lambda url, model: 1000.0,
    "output_cost_per_token": lambda url, model: 1000.0,
    "aws_bedrock_runtime_endpoint": lambda url, model: url,
    "langsmith_base_url": lambda url, model: url,
    "proxy_server_request": lambda url, model: {"url": url},
    "num_retries": lambda url, model: 50,
    "timeout": lambda url, model: 0.000001,
    "ssl_verify": lambda url, model: False,
    "_skip_mcp_handler": lambda url, model: False,
    "not_a_real_field": lambda url, model: url,
}
# LiteLLM-reserved names that are also public fields of a wire: they must not reach LiteLLM raw either.
LITELLM_OVERLAPS: dict[str, Callable[[str, str], Any]] = {
    # A configured model (an unconfigured one is refused: test_fallback_models.py) with an address of ours.
    "fallbacks": lambda url, model: [{"model": model, "api_base": url}],
}
LEAKS = (PROVIDER_KEY, TRAP_REPLY, MOCKED, "sk-attacker-chosen")

# (caller wire, model): same-wire routes use the forced path; cross-wire ones always go through LiteLLM.
ROUTE_KINDS = [
    ("openai", "gpt-4o-mini"),
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "claude-sonnet-4-5"),
    ("anthropic", "gpt-4o-mini"),
]


@pytest.fixture(scope="module")
def trap() -> Iterator[Trap]:
    with trap_listener() as trap:
        yield trap


@pytest.fixture(scope="module", params=["lean", "litellm"])
def gateway(request: pytest.FixtureRequest) -> Iterator[RunningGateway]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        settings = keyed_settings(request.param, monkeypatch)
        with running_gateway(**settings) as gw:
            yield gw


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(("wire", "model"), ROUTE_KINDS, ids=[f"{w}->{m}" for w, m in ROUTE_KINDS])
def test_hostile_fields_never_reach_an_upstream_call(
    gateway: RunningGateway, trap: Trap, wire: str, model: str, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    problems: list[str] = []
    caplog.set_level(logging.DEBUG, logger="gateway")
    route = gateway.services.settings.model_by_name(model)
    assert route is not None
    via_litellm = gateway.services.router.path_for(route, wire) == "litellm"
    fields = {**HOSTILE_FIELDS, **(LITELLM_OVERLAPS if wire == "openai" or via_litellm else {})}
    # The same request without the field: what each hostile request must get too (the field changes nothing).
    baseline, _, _ = send(gateway, wire, request_body(wire, model, f"baseline {uuid.uuid4().hex}", stream=stream))
    for name, make in fields.items():
        before = len(trap.hits)
        prompt = f"allowlist probe {name} {uuid.uuid4().hex}"
        body = request_body(wire, model, prompt, stream=stream, **{name: make(trap.url, model)})
        status, text, headers = send(gateway, wire, body)
        sent = last_provider_request(gateway)
        if len(trap.hits) != before:
            problems.append(f"{name}: the trap listener was called ({trap.hits[before:]})")
        if status != baseline:
            problems.append(f"{name}: status {status}, not {baseline} (the field should have been dropped silently)")
        if leaked := [leak for leak in LEAKS if leak in text + headers]:
            problems.append(f"{name}: the response carries {leaked}")
        if baseline != 200:
            continue  # this route kind does not reach the simulated provider (cross-wire to its Responses API)
        if prompt not in str(sent.get("body")):
            problems.append(f"{name}: the provider did not get this request")
        elif name in (sent.get("body") or {}) or "x-trap-header" in (sent.get("headers") or {}):
            problems.append(f"{name}: the field reached the provider")
    assert not problems, "\n".join(problems)
    assert not [r for r in caplog.records if PROVIDER_KEY in r.getMessage()]


def test_public_fields_still_reach_the_provider(gateway: RunningGateway) -> None:
    """Dropping unknown fields must not drop the API's own: a lean call carries them as sent."""
    prompt = f"public fields {uuid.uuid4().hex}"
    body = request_body("openai", "gpt-4o-mini", prompt, seed=7, user="u-1", logit_bias={"50256": -100})
    status, _, _ = send(gateway, "openai", body)
    sent = last_provider_request(gateway)["body"]
    assert status == 200
    if gateway.services.router.path_for(gateway.services.settings.models[0], "openai") == "lean":
        assert {k: sent[k] for k in ("seed", "user", "logit_bias")} == {
            k: body[k] for k in ("seed", "user", "logit_bias")
        }


def test_metadata_reaches_litellm_only_in_its_public_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteLLM reads its own keys (model_info, model_group, hidden_params ...) from `metadata`."""
    with running_gateway(**keyed_settings("litellm", monkeypatch)) as gw:
        metadata = {"user_id": "end-user-7", "model_info": {"id": "x"}, "model_group": "g", "hidden_params": {}}
        prompt = f"metadata {uuid.uuid4().hex}"
        status, _, _ = send(gw, "anthropic", request_body("anthropic", "claude-sonnet-4-5", prompt, metadata=metadata))
        assert status == 200
        assert last_provider_request(gw)["body"].get("metadata") in (None, {"user_id": "end-user-7"})
        status, _, _ = send(gw, "openai", request_body("openai", "gpt-4o-mini", prompt, metadata={"model_group": "g"}))
        assert status == 200
        assert "model_group" not in str(last_provider_request(gw)["body"].get("metadata"))


def test_dropped_fields_are_counted_by_api(monkeypatch: pytest.MonkeyPatch) -> None:
    with running_gateway(**keyed_settings("lean", monkeypatch)) as gw:
        send(gw, "openai", request_body("openai", "gpt-4o-mini", f"count {uuid.uuid4().hex}", base_url="x"))
        assert 'cachegate_upstream_dropped_fields_total{api="openai"} 1.0' in gw.metrics()


@pytest.mark.parametrize(
    "value",
    # Values an HTTP server accepts (obs-text bytes, a tab, any length) but that must not be sent on.
    [b"prompt-caching-2024-07-31\xff\xfe", "a" * 5000, "beta\tx-evil: 1"],
    ids=["non-ascii", "too-long", "tab"],
)
def test_forwarded_headers_are_vetted(monkeypatch: pytest.MonkeyPatch, value: str | bytes) -> None:
    with running_gateway(**keyed_settings("lean", monkeypatch)) as gw:
        prompt = f"headers {uuid.uuid4().hex}"
        status, _, _ = send(
            gw, "anthropic", request_body("anthropic", "claude-sonnet-4-5", prompt), headers={"anthropic-beta": value}
        )
        assert status == 200
        assert "anthropic-beta" not in last_provider_request(gw)["headers"]
        good = "prompt-caching-2024-07-31,context-1m-2025-08-07"
        send(
            gw,
            "anthropic",
            request_body("anthropic", "claude-sonnet-4-5", prompt + "2"),
            headers={"anthropic-beta": good},
        )
        assert last_provider_request(gw)["headers"]["anthropic-beta"] == good


def _sdk_body_fields(params: Any) -> set[str]:
    return set(typing.get_type_hints(params))


def test_allowlists_cover_the_official_sdks_request_params() -> None:
    """Every body field of the installed SDKs' request types is forwarded (headers-only params aside)."""
    openai_fields = _sdk_body_fields(openai_params.CompletionCreateParamsStreaming)
    anthropic_fields = _sdk_body_fields(anthropic_params.MessageCreateParamsStreaming) | _sdk_body_fields(
        anthropic_beta_params.MessageCreateParamsStreaming
    )
    sent_as_headers = {"betas", "user_profile_id", "workspace_id"}
    assert openai_fields <= WIRES["openai"].upstream_fields
    assert anthropic_fields - sent_as_headers <= WIRES["anthropic"].upstream_fields
