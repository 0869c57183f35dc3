"""Scripted agents for the guard-stage tests: real SDK clients, loops driven by simulator directives.

Each ``step(tool, args, result)`` sends the session's history with a directive asking the simulator for
that tool call; when the model answers with the call, the agent appends it and the given ``result``
(the "environment"), like any agent loop. What came back is returned as an ``Outcome``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

import anthropic
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tests.gateway_harness import RunningGateway

SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
OPENAI_TOOLS = [
    {"type": "function", "function": {"name": "bash", "description": "Run a command", "parameters": SCHEMA}}
]
ANTHROPIC_TOOLS = [{"name": "bash", "description": "Run a command", "input_schema": SCHEMA}]
TASK = "Fix the failing test in the repository."


@dataclass
class Outcome:
    kind: str  # "tool" (the model called a tool), "text" (a final answer) or "error"
    guard: str | None  # the x-cachegate-guard header (or the stream's trailing report)
    text: str = ""
    tool: str | None = None
    status: int = 200
    error: dict[str, Any] | None = None
    exception: str | None = None  # the SDK's exception class
    should_retry: str | None = None  # an error's x-should-retry header

    @property
    def action(self) -> str:
        return (self.guard or "continue").split(";")[0]


def directive(tool: str, args: dict[str, Any]) -> str:
    return f"[[sim:tool {tool} {json.dumps(args)}]]"


def trailer(raw_text: str) -> dict[str, str]:
    """The `: cachegate {...}` comment that ends a relayed stream (headers set after the first byte)."""
    for line in raw_text.splitlines():
        if line.startswith(": cachegate "):
            return dict(json.loads(line[len(": cachegate ") :]))
    return {}


class OpenAIAgent:
    def __init__(
        self,
        gw: RunningGateway,
        session: str | None,
        *,
        stream: bool = False,
        headers: dict[str, str] | None = None,
        tenant: str = "acme",
    ) -> None:
        extra = {**({"x-session-id": session} if session else {}), **(headers or {})}
        self.client = gw.openai(tenant, default_headers=extra)
        self.stream = stream
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
        self.calls = 0

    def step(self, tool: str, args: dict[str, Any], result: str, *, say: str | None = None) -> Outcome:
        request = [*self.messages, {"role": "user", "content": say or directive(tool, args)}]
        try:
            raw = self.client.chat.completions.with_raw_response.create(
                model="gpt-4o-mini",
                messages=request,
                tools=OPENAI_TOOLS,
                stream=self.stream,  # type: ignore[arg-type]
            )
        except openai.APIStatusError as error:
            body = error.response.json()["error"]
            return Outcome(
                "error",
                error.response.headers.get("x-cachegate-guard"),
                status=error.status_code,
                error=body,
                exception=type(error).__name__,
            )
        headers = dict(raw.headers)
        if self.stream:
            text, calls = "", {}  # type: ignore[var-annotated]
            chunks = cast("openai.Stream[ChatCompletionChunk]", raw.parse())
            for chunk in chunks:
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    for call in choice.delta.tool_calls or []:
                        slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                        slot["id"] = call.id or slot["id"]
                        slot["name"] += (call.function.name or "") if call.function else ""
                        slot["arguments"] += (call.function.arguments or "") if call.function else ""
            tool_calls = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls.values()
            ]
        else:
            message = cast(ChatCompletion, raw.parse()).choices[0].message
            text = message.content or ""
            tool_calls = [c.model_dump() for c in message.tool_calls or []]
        guard = headers.get("x-cachegate-guard")
        if not tool_calls:
            self.messages += [request[-1], {"role": "assistant", "content": text}]
            return Outcome("text", guard, text=text)
        self.calls += 1
        self.messages.append({"role": "assistant", "content": text or None, "tool_calls": tool_calls})
        self.messages += [{"role": "tool", "tool_call_id": c["id"], "content": result} for c in tool_calls]
        return Outcome("tool", guard, text=text, tool=tool_calls[0]["function"]["name"])


class AnthropicAgent:
    def __init__(
        self,
        gw: RunningGateway,
        session: str | None,
        *,
        stream: bool = False,
        headers: dict[str, str] | None = None,
        tenant: str = "acme",
    ) -> None:
        extra = {**({"x-session-id": session} if session else {}), **(headers or {})}
        self.client = gw.anthropic(tenant, default_headers=extra)
        self.stream = stream
        self.messages: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = [{"type": "text", "text": TASK}]  # the next user message
        self.calls = 0

    def step(self, tool: str, args: dict[str, Any], result: str, *, say: str | None = None) -> Outcome:
        user = {"role": "user", "content": [*self.pending, {"type": "text", "text": say or directive(tool, args)}]}
        kwargs: dict[str, Any] = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 512,
            "tools": ANTHROPIC_TOOLS,
            "messages": [*self.messages, user],
        }
        try:
            if self.stream:
                with self.client.messages.stream(**kwargs) as stream:
                    message = stream.get_final_message()
                    headers = dict(stream.response.headers)
            else:
                raw = self.client.messages.with_raw_response.create(**kwargs)
                message, headers = raw.parse(), dict(raw.headers)
        except anthropic.APIStatusError as error:
            body = error.response.json()["error"]
            return Outcome(
                "error",
                error.response.headers.get("x-cachegate-guard"),
                status=error.status_code,
                error=body,
                exception=type(error).__name__,
            )
        guard = headers.get("x-cachegate-guard")
        blocks = [block.model_dump(exclude_none=True) for block in message.content]
        text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
        uses = [b for b in blocks if b["type"] == "tool_use"]
        if not uses:
            self.messages += [user, {"role": "assistant", "content": blocks}]
            self.pending = []
            return Outcome("text", guard, text=text)
        self.calls += 1
        self.messages += [user, {"role": "assistant", "content": blocks}]
        self.pending = [{"type": "tool_result", "tool_use_id": b["id"], "content": result} for b in uses]
        return Outcome("tool", guard, text=text, tool=uses[0]["name"])


Agent = OpenAIAgent | AnthropicAgent


def make_agent(api: str, gw: RunningGateway, session: str | None, **kwargs: Any) -> Agent:
    return (OpenAIAgent if api == "openai" else AnthropicAgent)(gw, session, **kwargs)
