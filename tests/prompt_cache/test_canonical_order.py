"""Canonical tools keep what the model reads in order: a strict-mode model fills arguments in `properties`
order, so property names (and `$defs`, `enum`, `required`) reach the provider in the caller's order; only
the schema keywords are sorted, for prefix stability."""

from __future__ import annotations

import copy
from typing import Any

from tests.gateway_harness import RunningGateway
from tests.prompt_cache.conftest import anthropic_client, last_sim_body, new_session, openai_client

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "description": "Think first."},
        "city": {"type": "string"},
        "unit": {"enum": ["fahrenheit", "celsius"], "type": "string"},
        "when": {
            "type": "object",
            "properties": {"start": {"$ref": "#/$defs/day"}, "end": {"$ref": "#/$defs/day"}},
            "required": ["start", "end"],
            "additionalProperties": False,
        },
    },
    "required": ["reasoning", "city", "unit", "when"],
    "additionalProperties": False,
    "$defs": {"day": {"type": "string", "format": "date"}, "another": {"type": "integer"}},
}


def _names(schema: dict[str, Any]) -> list[Any]:
    """Everything whose order the model reads, in order."""
    when = schema["properties"]["when"]
    return [
        list(schema["properties"]),
        list(when["properties"]),
        schema["required"],
        when["required"],
        schema["properties"]["unit"]["enum"],
        list(schema["$defs"]),
    ]


def test_openai_strict_tool_keeps_property_order(gw: RunningGateway) -> None:
    tool = {"type": "function", "function": {"name": "weather", "strict": True, "parameters": copy.deepcopy(SCHEMA)}}
    openai_client(gw).chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "[[sim:text ok]] weather?"}],
        tools=[tool],  # type: ignore[list-item]
        extra_headers={"x-session-id": new_session()},
    )
    sent = last_sim_body(gw)["tools"][0]["function"]["parameters"]
    assert _names(sent) == _names(SCHEMA)
    assert list(sent) == sorted(SCHEMA)  # keywords are still canonical


def test_anthropic_tool_keeps_property_order(gw: RunningGateway) -> None:
    anthropic_client(gw).messages.create(
        model="claude-sonnet-4-5",
        max_tokens=16,
        messages=[{"role": "user", "content": "[[sim:text ok]] weather?"}],
        tools=[{"name": "weather", "input_schema": copy.deepcopy(SCHEMA)}],
        extra_headers={"x-session-id": new_session()},
    )
    sent = last_sim_body(gw)["tools"][0]["input_schema"]
    assert _names(sent) == _names(SCHEMA)
