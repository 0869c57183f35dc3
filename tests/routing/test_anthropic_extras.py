"""Claude Code's requests end to end (POST /v1/messages?beta=true, system messages, beta headers) through
every stage, and POST /v1/messages/count_tokens, with real SDKs and raw HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest

from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.routing import claude_code

CLAUDE_ALIASES = {"claude-*": "claude-sonnet-4-5"}
EXTRA_MODELS = [
    # Served by LiteLLM: count_tokens is counted by the gateway.
    {"name": "claude-litellm", "provider": "anthropic", "model": "claude-sonnet-4-5", "api_base": "embedded-sim",
     "path": "litellm"},
    # A small window, so that compaction acts on a Claude Code history.
    {"name": "claude-small", "provider": "anthropic", "model": "claude-sonnet-4-5", "api_base": "embedded-sim",
     "context_window": 8000},
]  # fmt: skip


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    settings = gateway_settings(model_aliases=CLAUDE_ALIASES)
    settings["models"] = settings["models"] + EXTRA_MODELS
    # Every optional stage on (the default policy): they must all cope with Claude Code's shape.
    with running_gateway(**settings) as gw:
        yield gw


def _stage_failures(gw: RunningGateway) -> list[str]:
    return [
        line
        for line in gw.metrics().splitlines()
        if line.startswith("cachegate_stage_failures_total{") and not line.endswith(" 0.0")
    ]


def _post(gw: RunningGateway, body: dict[str, Any], model_path: str = "/v1/messages?beta=true") -> httpx.Response:
    return httpx.post(f"{gw.url}{model_path}", json=body, headers=claude_code.headers(TENANT_KEYS["acme"]), timeout=30)


def test_claude_code_turns_through_every_stage(gw: RunningGateway) -> None:
    messages = claude_code.first_turn('[[sim:tool Bash {"command": "echo hi", "description": "echo"}]]')
    first = _post(gw, claude_code.request(messages))
    assert first.status_code == 200 and first.headers["content-type"].startswith("text/event-stream")
    events = claude_code.sse_events(first.text)
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    tool = next(e["content_block"] for e in events if e["type"] == "content_block_start")
    assert tool["type"] == "tool_use" and tool["name"] == "Bash"

    sent = gw.sim_requests(1)[-1]
    assert sent["path"] == "/sim/v1/messages"
    assert sent["headers"]["anthropic-beta"] == claude_code.BETAS  # forwarded as sent
    body = sent["body"]
    assert body["model"] == "claude-sonnet-4-5"  # claude-opus-5-5 through the alias
    assert body["messages"][1]["role"] == "system" and body["messages"][1]["output_config"] == {"effort": "medium"}
    assert body["metadata"] == claude_code.request(messages)["metadata"]
    assert body["context_management"] and body["output_config"] and body["thinking"]

    # Turn 2, after the tool ran: the 4 breakpoints Claude Code sets are the API's maximum; the gateway's
    # prompt-cache stage must not add a fifth (the simulator, like the API, would answer 400).
    second_messages = claude_code.tool_turn(messages, tool["id"], "hi-from-tool")
    second = _post(gw, claude_code.request(second_messages))
    assert second.status_code == 200, second.text
    start = next(e for e in claude_code.sse_events(second.text) if e["type"] == "message_start")
    assert start["message"]["usage"]["cache_read_input_tokens"] > 1000  # the prefix turn 1 wrote
    # The same turn again: the response cache answers it (an exact-tier hit, replayed as a stream).
    again = _post(gw, claude_code.request(second_messages))
    assert again.status_code == 200 and again.headers["x-cachegate-cache"] == "exact"
    assert claude_code.sse_events(again.text)[-1]["type"] == "message_stop"
    plain = _post(gw, claude_code.request(second_messages, stream=False))
    assert plain.status_code == 200 and plain.json()["type"] == "message"
    assert _stage_failures(gw) == []


@pytest.mark.parametrize(("turns", "words", "action"), [(6, 250, "compacted"), (8, 400, "summarized")])
def test_claude_code_history_is_compacted_around_its_system_message(
    gw: RunningGateway, turns: int, words: int, action: str
) -> None:
    messages = claude_code.first_turn(f"list the files ({action})")
    for turn in range(turns):
        messages = claude_code.tool_turn(messages, f"toolu_{turn:04d}", f"file-{turn} " * words)
    response = _post(gw, claude_code.request(messages, model="claude-small", stream=False))
    assert response.status_code == 200, response.text
    assert response.headers["x-cachegate-compaction"] == action
    sent = gw.sim_requests(1)[-1]["body"]["messages"]
    assert sent[1] == claude_code.system_message()  # untouched, in place
    assert len(str(sent)) < len(str(messages)) * 0.8
    assert _stage_failures(gw) == []


def test_sdk_beta_messages_with_a_system_message(gw: RunningGateway) -> None:
    message = gw.anthropic().beta.messages.create(
        model="claude-haiku-5-5",
        max_tokens=50,
        betas=["context-management-2025-06-27"],
        messages=[
            {"role": "user", "content": "[[sim:text PONG]]"},
            {"role": "system", "content": "Answer briefly."},  # type: ignore[misc,list-item]
        ],
    )
    assert message.content[0].type == "text" and message.content[0].text == "PONG"
    assert gw.sim_requests(1)[-1]["headers"]["anthropic-beta"] == "context-management-2025-06-27"


def test_count_tokens_forwarded_to_an_anthropic_route(gw: RunningGateway) -> None:
    client = gw.anthropic()
    messages: Any = claude_code.first_turn("how many tokens is this?")
    counted = client.messages.count_tokens(
        model="claude-opus-5-5", messages=messages, system="You are helpful.", tools=[claude_code.BASH]
    )
    sent = gw.sim_requests(1)[-1]
    assert sent["path"] == "/sim/v1/messages/count_tokens" and sent["body"]["model"] == "claude-sonnet-4-5"
    direct = httpx.post(f"{gw.sim_url}/v1/messages/count_tokens", json=sent["body"]).json()
    assert counted.input_tokens == direct["input_tokens"] > 20


def test_count_tokens_beta_and_local_count(gw: RunningGateway) -> None:
    client = gw.anthropic()
    before = len(gw.sim_requests(100))
    counted = client.beta.messages.count_tokens(
        model="claude-litellm",
        betas=["per-turn-control-2026-07-01"],
        messages=claude_code.first_turn("count me"),  # type: ignore[arg-type]
        tools=[claude_code.BASH],  # type: ignore[list-item]
    )
    assert counted.input_tokens > 200  # the system message's text is counted too
    assert len(gw.sim_requests(100)) == before  # counted by the gateway, not by a provider


def test_count_tokens_errors_in_anthropic_shape(gw: RunningGateway) -> None:
    with pytest.raises(anthropic.NotFoundError) as missing:
        gw.anthropic().messages.count_tokens(model="llama-4", messages=[{"role": "user", "content": "hi"}])
    assert "Available models:" in str(missing.value)
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=gw.url, api_key="wrong", max_retries=0).messages.count_tokens(
            model="claude-sonnet-4-5", messages=[{"role": "user", "content": "hi"}]
        )
    bad = httpx.post(
        f"{gw.url}/v1/messages/count_tokens?beta=true",
        json={"model": "claude-sonnet-4-5"},
        headers={"x-api-key": TENANT_KEYS["acme"]},
    )
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"


def test_simulator_takes_system_messages_and_reads_directives_before_them(gw: RunningGateway) -> None:
    body = claude_code.request(claude_code.first_turn("[[sim:text hello there]]"), model="claude-sonnet-4-5")
    response = httpx.post(f"{gw.sim_url}/v1/messages", json={**body, "stream": False})
    assert response.status_code == 200 and response.json()["content"][0]["text"] == "hello there"
    bad = httpx.post(f"{gw.sim_url}/v1/messages", json={**body, "messages": [{"role": "tool", "content": "x"}]})
    assert bad.status_code == 400
