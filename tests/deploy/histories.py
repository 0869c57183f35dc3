"""Agent histories the deployment tests send: what a looping tool-calling agent resends every turn."""

from __future__ import annotations

from typing import Any

RUN_TESTS: Any = [{"type": "function", "function": {"name": "run_tests", "parameters": {"type": "object"}}}]


def openai_tool_turns(turns: int, result: str) -> list[Any]:
    """An OpenAI-shaped history: the task, then `turns` identical run_tests calls with identical results."""
    messages: list[Any] = [{"role": "user", "content": "Find the failing test and fix it."}]
    for i in range(turns):
        call = {"id": f"call_{i}", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": result},
        ]
    return messages
