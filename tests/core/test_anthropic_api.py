"""Anthropic Messages through the gateway with the official SDK, on both upstream paths."""

from __future__ import annotations

from typing import Any

from tests.gateway_harness import RunningGateway

TOOLS: list[Any] = [
    {
        "name": "get_weather",
        "description": "Weather for a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


def test_message_non_streaming(any_gateway: RunningGateway) -> None:
    raw = any_gateway.anthropic().messages.with_raw_response.create(
        model="claude-sonnet-4-5",
        max_tokens=100,
        messages=[{"role": "user", "content": "[[sim:text Bonjour.]]"}],
    )
    message = raw.parse()
    assert message.content[0].type == "text" and message.content[0].text == "Bonjour."
    assert message.stop_reason == "end_turn" and message.usage.input_tokens > 0
    assert float(raw.headers["x-cachegate-cost-usd"]) > 0


def test_message_streaming(any_gateway: RunningGateway) -> None:
    with any_gateway.anthropic().messages.stream(
        model="claude-sonnet-4-5",
        max_tokens=100,
        messages=[{"role": "user", "content": "[[sim:text alpha beta gamma delta epsilon]]"}],
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "alpha beta gamma delta epsilon"
    assert final.usage.output_tokens > 0


def test_tool_use_round_trip(any_gateway: RunningGateway) -> None:
    client = any_gateway.anthropic()
    messages: list[Any] = [{"role": "user", "content": '[[sim:tool get_weather {"city": "Rome"}]]'}]
    first = client.messages.create(model="claude-sonnet-4-5", max_tokens=100, tools=TOOLS, messages=messages)
    tool_use = next(b for b in first.content if b.type == "tool_use")
    assert first.stop_reason == "tool_use" and tool_use.name == "get_weather" and tool_use.input == {"city": "Rome"}
    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": "rain"}]},
    ]
    second = client.messages.create(model="claude-sonnet-4-5", max_tokens=100, tools=TOOLS, messages=messages)
    assert second.stop_reason == "end_turn" and second.content[0].type == "text"


def test_tool_use_streaming(any_gateway: RunningGateway) -> None:
    with any_gateway.anthropic().messages.stream(
        model="claude-sonnet-4-5",
        max_tokens=100,
        tools=TOOLS,
        messages=[{"role": "user", "content": '[[sim:tool get_weather {"city": "Lima"}]]'}],
    ) as stream:
        final = stream.get_final_message()
    tool_use = next(b for b in final.content if b.type == "tool_use")
    assert tool_use.input == {"city": "Lima"} and final.stop_reason == "tool_use"


def test_system_blocks_with_cache_control_pass(any_gateway: RunningGateway) -> None:
    message = any_gateway.anthropic().messages.create(
        model="claude-sonnet-4-5",
        max_tokens=50,
        system=[{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": "[[sim:text ok]]"}],
    )
    assert message.content[0].type == "text" and message.content[0].text == "ok"
