"""Request-body schemas for the OpenAPI document (docs, client generation, and schema fuzzing).

Validation itself is gateway/wire (hand-written, so errors come back in each provider's own shape);
these schemas describe the same bodies.
"""

from __future__ import annotations

from typing import Any

_MESSAGE_CONTENT: dict[str, Any] = {
    "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}, {"type": "null"}]
}

CHAT_COMPLETIONS_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["model", "messages"],
    "properties": {
        "model": {"type": "string"},
        "messages": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["role"],
                "properties": {
                    "role": {"type": "string", "enum": ["system", "developer", "user", "assistant", "tool"]},
                    "content": _MESSAGE_CONTENT,
                    "tool_calls": {"type": "array", "items": {"type": "object"}},
                    "tool_call_id": {"type": "string"},
                },
            },
        },
        "tools": {"type": "array", "items": {"type": "object"}},
        "stream": {"type": "boolean"},
        "temperature": {"type": "number"},
        "max_tokens": {"type": "integer"},
        "user": {"type": "string"},
    },
}

MESSAGES_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["model", "max_tokens", "messages"],
    "properties": {
        "model": {"type": "string"},
        "max_tokens": {"type": "integer"},
        "system": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}]},
        "messages": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"type": "string", "enum": ["user", "assistant"]},
                    "content": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}]},
                },
            },
        },
        "tools": {"type": "array", "items": {"type": "object"}},
        "stream": {"type": "boolean"},
        "temperature": {"type": "number"},
        "metadata": {"type": "object"},
    },
}

RESPONSES_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["model"],
    "properties": {
        "model": {"type": "string"},
        "input": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}]},
        "instructions": {"type": "string"},
        "tools": {"type": "array", "items": {"type": "object"}},
        "stream": {"type": "boolean"},
        "store": {"type": "boolean"},
        "previous_response_id": {"type": "string"},
        "prompt_cache_key": {"type": "string"},
        "max_output_tokens": {"type": "integer"},
        "temperature": {"type": "number"},
    },
}


def request_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}
