"""Synthetic agent histories (OpenAI and Anthropic shapes) that grow past a small context window."""

from __future__ import annotations

from typing import Any

TOOLS_OPENAI = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
TOOLS_ANTHROPIC = [
    {
        "name": "bash",
        "description": "Run a shell command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]
SYSTEM = "You are a careful coding agent. Use the bash tool, one command at a time."
TASK = "Fix the failing test in the parser module. [[sim:text noted]]"


def output(step: int, lines: int = 40) -> str:
    """A tool output of about 12 tokens a line, different at every step."""
    return "\n".join(
        f"src/module_{step}/file_{j}.py:{step * 7 + j}: def handler_{step}_{j}(x): return x" for j in range(lines)
    )


def thought(step: int, words: int = 8) -> str:
    return f"Step {step}: " + " ".join(f"reason{step}w{j}" for j in range(words))


def openai_history(steps: int, *, lines: int = 40, words: int = 8) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for step in range(steps):
        call = {
            "id": f"call_{step}",
            "type": "function",
            "function": {"name": "bash", "arguments": f'{{"command": "cat module_{step}.py"}}'},
        }
        messages.append({"role": "assistant", "content": thought(step, words), "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{step}", "content": output(step, lines)})
    return messages


def anthropic_history(steps: int, *, lines: int = 40, words: int = 8) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for step in range(steps):
        use = {"type": "tool_use", "id": f"toolu_{step}", "name": "bash", "input": {"command": f"cat module_{step}.py"}}
        messages.append({"role": "assistant", "content": [{"type": "text", "text": thought(step, words)}, use]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{step}", "content": output(step, lines)}
        messages.append({"role": "user", "content": [result]})
    return messages


TOOLS_RESPONSES = [
    {
        "type": "function",
        "name": "bash",
        "description": "Run a shell command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]


def responses_input(steps: int, *, lines: int = 40, words: int = 8) -> list[dict[str, Any]]:
    """A Responses history: the task, then per step an assistant message, a function_call item and its
    function_call_output item (the system prompt goes in `instructions`)."""
    items: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for step in range(steps):
        items.append({"role": "assistant", "content": thought(step, words)})
        arguments = f'{{"command": "cat module_{step}.py"}}'
        items.append({"type": "function_call", "call_id": f"call_{step}", "name": "bash", "arguments": arguments})
        items.append({"type": "function_call_output", "call_id": f"call_{step}", "output": output(step, lines)})
    return items


def gemini_contents(steps: int, *, lines: int = 40, words: int = 8) -> list[dict[str, Any]]:
    """A Gemini history: model contents with a functionCall part, answered by a functionResponse part."""
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": TASK}]}]
    for step in range(steps):
        call = {"id": f"call_{step}", "name": "bash", "args": {"command": f"cat module_{step}.py"}}
        contents.append({"role": "model", "parts": [{"text": thought(step, words)}, {"functionCall": call}]})
        response = {"id": f"call_{step}", "name": "bash", "response": {"output": output(step, lines)}}
        contents.append({"role": "user", "parts": [{"functionResponse": response}]})
    return contents
