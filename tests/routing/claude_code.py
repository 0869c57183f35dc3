"""Requests shaped exactly as Claude Code sends them (docs/design/clients.md, "Claude Code")."""

from __future__ import annotations

import json
from typing import Any

SESSION = "eca57a02-a423-4624-8b1a-c71629d95465"
BETAS = (
    "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,"
    "per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,"
    "advanced-tool-use-2025-11-20,effort-2025-11-24"
)
EPHEMERAL = {"type": "ephemeral"}
BASH = {
    "name": "Bash",
    "description": "Run a shell command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
        "required": ["command"],
    },
}


def headers(key: str) -> dict[str, str]:
    return {
        "x-api-key": key,
        "anthropic-version": "2023-06-01",
        "anthropic-beta": BETAS,
        "anthropic-dangerous-direct-browser-access": "true",
        "X-Claude-Code-Session-Id": SESSION,
        "x-app": "cli",
        "User-Agent": "claude-cli/2.1.330 (external, sdk-cli)",
    }


def system_message(text: str = "# Environment\nYou have been invoked in the following environment: linux.") -> dict:
    return {
        "role": "system",
        "content": [{"type": "text", "text": text * 20, "cache_control": EPHEMERAL}],
        "output_config": {"effort": "medium"},
    }


def request(messages: list[dict[str, Any]], model: str = "claude-opus-5-5", stream: bool = True) -> dict[str, Any]:
    user_id = {"device_id": "616ad367" + "0" * 56, "account_uuid": "", "session_id": SESSION}
    return {
        "model": model,
        "messages": messages,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.330.440; cc_entrypoint=sdk-cli;"},
            {
                "type": "text",
                "text": "You are a Claude agent, built on Anthropic's Claude Agent SDK.",
                "cache_control": EPHEMERAL,
            },
            {"type": "text", "text": "\nYou are an agent working with the user. " * 120, "cache_control": EPHEMERAL},
        ],
        "tools": [BASH],
        "metadata": {"user_id": json.dumps(user_id)},
        "max_tokens": 128000,
        "thinking": {"type": "adaptive", "display": "omitted"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
        "output_config": {"effort": "medium"},
        "stream": stream,
    }


def first_turn(prompt: str) -> list[dict[str, Any]]:
    reminder = {"type": "text", "text": "<system-reminder>\nAttribution for git commits: none.\n</system-reminder>"}
    return [{"role": "user", "content": [reminder, {"type": "text", "text": prompt}]}, system_message()]


def tool_turn(messages: list[dict[str, Any]], tool_id: str, output: str) -> list[dict[str, Any]]:
    """The history after one Bash call, the last block marked as Claude Code marks it."""
    for message in messages:  # only the newest block carries the moving breakpoint
        for block in message["content"] if message["role"] == "user" else []:
            if block.get("type") == "tool_result":
                block.pop("cache_control", None)
    call = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "echo hi", "description": "echo"}}
    result = {"type": "tool_result", "tool_use_id": tool_id, "content": output, "is_error": False}
    return [
        *messages,
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [{**result, "cache_control": EPHEMERAL}]},
    ]


def sse_events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
