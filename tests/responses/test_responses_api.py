"""POST /v1/responses with the real openai SDK, through both upstream paths, to an OpenAI and an
Anthropic model: text, streams (the full event sequence), a function-tool round trip, usage and cost."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from tests.core.test_usage_cost import GPT_4O_MINI, LONG_TEXT, assert_usd
from tests.gateway_harness import TENANT_KEYS, RunningGateway

MODELS = ["gpt-4o-mini", "claude-sonnet-4-5"]
TOOLS: Any = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]
EVENT_ORDER = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]


@pytest.mark.parametrize("model", MODELS)
def test_text_reply(any_gateway: RunningGateway, model: str) -> None:
    raw = any_gateway.openai().responses.with_raw_response.create(model=model, input="[[sim:text hello there]]")
    response = raw.parse()
    assert response.output_text == "hello there"
    assert response.status == "completed"
    assert response.usage is not None and response.usage.input_tokens > 0 and response.usage.output_tokens == 2
    assert float(raw.headers["x-cachegate-cost-usd"]) > 0


@pytest.mark.parametrize("model", MODELS)
def test_stream_event_sequence(any_gateway: RunningGateway, model: str) -> None:
    stream = any_gateway.openai().responses.create(
        model=model, input="[[sim:text one two three four five six seven eight nine ten]]", stream=True
    )
    events = list(stream)
    kinds = [e.type for e in events]
    assert [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1]] == EVENT_ORDER
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == "one two three four five six seven eight nine ten"
    completed = events[-1]
    assert completed.type == "response.completed"
    # LangChain iterates the completed response's output; Codex reads its usage
    assert completed.response.output_text == deltas and completed.response.usage is not None
    assert completed.response.usage.output_tokens > 0


@pytest.mark.parametrize("model", MODELS)
def test_stream_helper_final_response(any_gateway: RunningGateway, model: str) -> None:
    with any_gateway.openai().responses.stream(model=model, input="[[sim:text streamed answer]]") as stream:
        final = stream.get_final_response()
    assert final.output_text == "streamed answer"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("model", MODELS)
def test_function_tool_round_trip(any_gateway: RunningGateway, model: str, stream: bool) -> None:
    client = any_gateway.openai()
    ask: Any = [{"role": "user", "content": '[[sim:tool get_weather {"city": "Paris"}]]'}]
    if stream:
        with client.responses.stream(model=model, input=ask, tools=TOOLS) as events:
            first = events.get_final_response()
    else:
        first = client.responses.create(model=model, input=ask, tools=TOOLS)
    calls = [item for item in first.output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "get_weather" and calls[0].arguments == '{"city": "Paris"}'
    call = calls[0]
    follow: Any = [
        *ask,
        call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 21C"},
    ]
    second = client.responses.create(model=model, input=follow, tools=TOOLS)
    assert second.output_text == "The tool returned: sunny, 21C"


def test_openai_cached_prefix_cost(any_gateway: RunningGateway) -> None:
    any_gateway.reset_sim()
    client = any_gateway.openai()
    request: Any = {
        "model": "gpt-4o-mini",
        "instructions": LONG_TEXT,
        "input": [{"role": "user", "content": "[[sim:text ok]]"}],
    }
    first = client.responses.with_raw_response.create(**request)
    usage1 = first.parse().usage
    assert usage1 is not None and usage1.input_tokens > 1024
    assert first.headers["x-cachegate-cache-read-tokens"] == "0"
    assert_usd(
        first.headers["x-cachegate-cost-usd"],
        usage1.input_tokens * GPT_4O_MINI["input"] + usage1.output_tokens * GPT_4O_MINI["output"],
    )
    second = client.responses.with_raw_response.create(**request)
    usage2 = second.parse().usage
    assert usage2 is not None
    cached = usage2.input_tokens_details.cached_tokens
    assert cached >= 1024 and cached % 128 == 0 and usage2.input_tokens - cached < 128
    assert second.headers["x-cachegate-cache-read-tokens"] == str(cached)
    expected = (
        (usage2.input_tokens - cached) * GPT_4O_MINI["input"]
        + cached * GPT_4O_MINI["cached"]
        + usage2.output_tokens * GPT_4O_MINI["output"]
    )
    assert_usd(second.headers["x-cachegate-cost-usd"], expected)
    assert_usd(second.headers["x-cachegate-saved-usd"], cached * (GPT_4O_MINI["input"] - GPT_4O_MINI["cached"]))


def test_invalid_request_is_openai_shaped_400(any_gateway: RunningGateway) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        any_gateway.openai().responses.create(model="gpt-4o-mini", input=[{"type": "function_call", "name": 3}])  # type: ignore[list-item]
    error = caught.value.body
    assert isinstance(error, dict) and error["type"] == "invalid_request_error"
    assert str(error["param"]).startswith("input[0]")


def test_unknown_fields_and_tool_types_pass_or_drop(any_gateway: RunningGateway) -> None:
    """Codex's body: unknown tool types and `client_metadata` reach the provider; a LiteLLM keyword does not."""
    body = {
        "model": "gpt-4o-mini",
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "[[sim:text hi]]"}]}],
        "tools": [*TOOLS, {"type": "web_search"}],
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "client_metadata": {"session_id": "s-1"},
        "api_base": "http://169.254.169.254/",
    }
    response = httpx.post(
        f"{any_gateway.url}/v1/responses", json=body, headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["output"][0]["content"][0]["text"] == "hi"
    assert response.headers["x-cachegate-session"] == "s-1"
    sent = any_gateway.sim_requests(limit=1)[-1]["body"]
    assert "api_base" not in sent and {"type": "web_search"} in sent["tools"]
