"""OpenAI Chat Completions through the gateway with the official SDK, on both upstream paths."""

from __future__ import annotations

import json

from tests.gateway_harness import RunningGateway

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def test_chat_non_streaming(any_gateway: RunningGateway) -> None:
    raw = any_gateway.openai().chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "[[sim:text Paris is the capital.]]"}]
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == "Paris is the capital."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.prompt_tokens > 0
    assert float(raw.headers["x-cachegate-cost-usd"]) > 0


def test_chat_streaming(any_gateway: RunningGateway) -> None:
    stream = any_gateway.openai().chat.completions.create(
        model="gpt-4o-mini",
        stream=True,
        messages=[{"role": "user", "content": "[[sim:text one two three four five six seven]]"}],
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "one two three four five six seven"
    assert all(c.choices for c in chunks), "usage-only chunk leaked although include_usage was not asked"


def test_chat_streaming_with_usage(any_gateway: RunningGateway) -> None:
    stream = any_gateway.openai().chat.completions.create(
        model="gpt-4o-mini",
        stream=True,
        stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "hello"}],
    )
    usages = [c.usage for c in stream if c.usage]
    assert usages and usages[-1].prompt_tokens > 0


def test_tool_call_round_trip(any_gateway: RunningGateway) -> None:
    client = any_gateway.openai()
    messages: list[dict[str, object]] = [
        {"role": "user", "content": 'Weather? [[sim:tool get_weather {"city": "Paris"}]]'}
    ]
    first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21C"},
    ]
    second = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    assert second.choices[0].message.content and not second.choices[0].message.tool_calls


def test_tool_call_streaming(any_gateway: RunningGateway) -> None:
    stream = any_gateway.openai().chat.completions.create(
        model="gpt-4o-mini",
        stream=True,
        tools=TOOLS,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": '[[sim:tool get_weather {"city": "Oslo"}]]'}],
    )
    name, arguments, finish = "", "", None
    for chunk in stream:
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or []:
                name += call.function.name or "" if call.function else ""
                arguments += call.function.arguments or "" if call.function else ""
            finish = choice.finish_reason or finish
    assert name == "get_weather" and json.loads(arguments) == {"city": "Oslo"} and finish == "tool_calls"


def test_openai_client_to_anthropic_model(any_gateway: RunningGateway) -> None:
    """Format conversion (OpenAI caller, Anthropic provider) goes through LiteLLM."""
    completion = any_gateway.openai().chat.completions.create(
        model="claude-sonnet-4-5", max_tokens=50, messages=[{"role": "user", "content": "[[sim:text hi there]]"}]
    )
    assert completion.choices[0].message.content == "hi there"


def test_models_list(gw: RunningGateway) -> None:
    names = {m.id for m in gw.openai().models.list()}
    assert {"gpt-4o-mini", "claude-sonnet-4-5"} <= names
