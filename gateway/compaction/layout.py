"""Where each API shape keeps what compaction touches: tool calls, tool results, system, tools, and how
its replies read (text, tool calls) when the gateway itself calls upstream (summaries, retrieval rounds).

OpenAI Chat: system/developer messages in `messages`; an assistant message's `tool_calls` are answered
by `tool` messages right after it. Anthropic Messages: `system` is a body field; an assistant message's
`tool_use` blocks are answered by `tool_result` blocks in the next user message. The Responses and
Gemini shapes: gateway/compaction/responses_layout.py, gemini_layout.py; all of them by wire name:
gateway/compaction/layouts.py.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

import orjson

Message = dict[str, Any]
Reply = dict[str, Any]
Call = tuple[str, str, dict[str, Any]]  # (call id, tool name, arguments) of a tool call in a reply
TEXT_PARTS = ("text", "input_text", "output_text")  # content parts that hold plain text, in any shape


def digest(value: Any, size: int = 12) -> str:
    return hashlib.blake2b(orjson.dumps(value), digest_size=size).hexdigest()


def parts_text(content: Any) -> str | None:
    """A content value as plain text: a string, or a list of text parts only (else None)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") in TEXT_PARTS and isinstance(p.get("text"), str) for p in content
    ):
        return "\n".join(p["text"] for p in content)
    return None


def arguments_of(raw: Any) -> dict[str, Any]:
    """Tool-call arguments sent as a JSON string; unparsable or non-object arguments read as {}."""
    try:
        arguments = orjson.loads(raw or "{}")
    except (orjson.JSONDecodeError, TypeError):
        return {}
    return arguments if isinstance(arguments, dict) else {}


class Found(NamedTuple):
    """A tool result as a layout finds it in one message: its block (None: the message is the result),
    the call it answers, its content."""

    block: int | None
    call_id: str
    content: Any


def result_handle(call_id: str, content: Any) -> str:
    """Content-addressed, so the same result gets the same handle on every turn and replica."""
    return "ctx_" + digest([call_id, content])


class Layout(ABC):
    name: str
    history_field = "messages"  # the body field holding the conversation
    system_field: str | None = None  # the body field holding the system prompt (None: it is in the history)
    usage_field = "usage"  # the reply field holding its usage

    def messages(self, body: dict[str, Any]) -> list[Message]:
        messages = body.get(self.history_field)
        return messages if isinstance(messages, list) else []

    def with_messages(self, body: dict[str, Any], messages: list[Message]) -> dict[str, Any]:
        return {**body, self.history_field: messages}

    def system(self, body: dict[str, Any]) -> Any:
        """The system prompt wherever this layout keeps it outside `messages` (None if inside)."""
        return body.get(self.system_field) if self.system_field is not None else None

    @abstractmethod
    def calls(self, message: Message) -> list[tuple[str, str]]:
        """(call id, tool name) of the tool calls a model message makes."""

    @abstractmethod
    def results(self, message: Message) -> list[Found]:
        """Tool results carried by a message."""

    def result_content(self, message: Message, block: int | None) -> Any:
        """The content of the message's tool result at `block`."""
        return next(found.content for found in self.results(message) if found.block == block)

    @abstractmethod
    def with_contents(self, message: Message, contents: dict[int | None, Any]) -> Message:
        """A copy of the message with the given tool results' contents replaced (keys: block index)."""

    @abstractmethod
    def head_length(self, messages: list[Message], pin_first_user: bool) -> int:
        """Messages never summarized: leading system messages and (optionally) the first user message."""

    @abstractmethod
    def no_tool_use(self) -> dict[str, Any]:
        """Body fields that forbid tool use while keeping the tool list (and the cached prefix)."""

    def is_reply(self, message: Message) -> bool:
        """Whether the model wrote this message (the previous request ended right before its newest one)."""
        return message.get("role") == "assistant"

    def continues_calls(self, message: Message) -> bool:
        """Whether the message may sit between tool calls and their results (a call is left dangling
        by any other message)."""
        return False

    def binds_to_next(self, message: Message) -> bool:
        """Whether the message must stay with the one after it (no cut between them)."""
        return False

    @staticmethod
    def user_message(text: str) -> Message:
        return {"role": "user", "content": text}

    def limit_output(self, request: dict[str, Any], body: dict[str, Any], max_tokens: int) -> None:
        """Cap the output of a summary request (`body`: the client's request it derives from)."""
        thinking = body.get("thinking")
        budget = thinking.get("budget_tokens", 0) if isinstance(thinking, dict) else 0
        token_field = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
        request[token_field] = max_tokens + int(budget or 0)

    # The reply side: what the gateway reads from an answer to its own calls upstream.
    @abstractmethod
    def reply_text(self, reply: Reply) -> str: ...

    @abstractmethod
    def reply_calls(self, reply: Reply) -> list[Call]: ...

    @abstractmethod
    def reply_messages(self, reply: Reply) -> list[Message]:
        """The reply as the model's message(s) of a follow-up request."""

    @abstractmethod
    def tool_answers(self, answers: list[tuple[str, str]]) -> list[Message]:
        """Messages answering tool calls of the gateway's own tool: (call id, text) pairs."""

    @abstractmethod
    def without_tool(self, reply: Reply, name: str) -> Reply:
        """The reply with the calls of one tool removed (the client never sees the gateway's own tool)."""

    @abstractmethod
    def tool_definition(self, name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        """A function tool as one entry of this shape's `tools`."""

    @abstractmethod
    def tool_names(self, tools: list[Any]) -> list[str]: ...


class OpenAILayout(Layout):
    name = "openai"

    def calls(self, message: Message) -> list[tuple[str, str]]:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        return [
            (str(c.get("id")), str((c.get("function") or {}).get("name", "unknown")))
            for c in calls or []
            if isinstance(c, dict)
        ]

    def results(self, message: Message) -> list[Found]:
        if message.get("role") != "tool":
            return []
        return [Found(None, str(message.get("tool_call_id")), message.get("content"))]

    def with_contents(self, message: Message, contents: dict[int | None, Any]) -> Message:
        return {**message, "content": contents[None]}

    def head_length(self, messages: list[Message], pin_first_user: bool) -> int:
        index = 0
        while index < len(messages) and messages[index].get("role") in ("system", "developer"):
            index += 1
        if pin_first_user and index < len(messages) and messages[index].get("role") == "user":
            index += 1
        return index

    def no_tool_use(self) -> dict[str, Any]:
        return {"tool_choice": "none"}

    @staticmethod
    def _message(reply: Reply) -> dict[str, Any]:
        return dict((reply.get("choices") or [{}])[0].get("message") or {})

    def reply_text(self, reply: Reply) -> str:
        return str(self._message(reply).get("content") or "")

    def reply_calls(self, reply: Reply) -> list[Call]:
        calls = []
        for call in self._message(reply).get("tool_calls") or []:
            function = call.get("function") or {}
            calls.append((str(call.get("id")), str(function.get("name")), arguments_of(function.get("arguments"))))
        return calls

    def reply_messages(self, reply: Reply) -> list[Message]:
        return [{k: v for k, v in self._message(reply).items() if k in ("role", "content", "tool_calls")}]

    def tool_answers(self, answers: list[tuple[str, str]]) -> list[Message]:
        return [{"role": "tool", "tool_call_id": call_id, "content": text} for call_id, text in answers]

    def without_tool(self, reply: Reply, name: str) -> Reply:
        choices = []
        for choice in reply.get("choices") or []:
            message = dict(choice.get("message") or {})
            calls = [c for c in message.get("tool_calls") or [] if (c.get("function") or {}).get("name") != name]
            if calls:
                message["tool_calls"] = calls
            else:
                message.pop("tool_calls", None)
                choice = {**choice, "finish_reason": "stop"}
            choices.append({**choice, "message": message})
        return {**reply, "choices": choices}

    def tool_definition(self, name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}

    def tool_names(self, tools: list[Any]) -> list[str]:
        return [str((t.get("function") or {}).get("name")) for t in tools if isinstance(t, dict)]


class AnthropicLayout(Layout):
    name = "anthropic"
    system_field = "system"

    @staticmethod
    def _blocks(message: Message) -> list[Any]:
        content = message.get("content")
        return content if isinstance(content, list) else []

    def calls(self, message: Message) -> list[tuple[str, str]]:
        if message.get("role") != "assistant":
            return []
        return [
            (str(b.get("id")), str(b.get("name", "unknown")))
            for b in self._blocks(message)
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]

    def results(self, message: Message) -> list[Found]:
        if message.get("role") != "user":
            return []
        return [
            Found(position, str(b.get("tool_use_id")), b.get("content", ""))
            for position, b in enumerate(self._blocks(message))
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]

    def with_contents(self, message: Message, contents: dict[int | None, Any]) -> Message:
        blocks = [
            {**block, "content": contents[position]} if position in contents else block
            for position, block in enumerate(self._blocks(message))
        ]
        return {**message, "content": blocks}

    def head_length(self, messages: list[Message], pin_first_user: bool) -> int:
        index = 1 if pin_first_user and messages and messages[0].get("role") == "user" else 0
        # `system` messages right after it (Claude Code's environment, per-turn-control beta) stay too.
        while index < len(messages) and messages[index].get("role") == "system":
            index += 1
        return index

    def no_tool_use(self) -> dict[str, Any]:
        return {"tool_choice": {"type": "none"}}

    def reply_text(self, reply: Reply) -> str:
        return "".join(b.get("text", "") for b in reply.get("content") or [] if b.get("type") == "text")

    def reply_calls(self, reply: Reply) -> list[Call]:
        return [
            (str(b.get("id")), str(b.get("name")), b.get("input") if isinstance(b.get("input"), dict) else {})
            for b in reply.get("content") or []
            if b.get("type") == "tool_use"
        ]

    def reply_messages(self, reply: Reply) -> list[Message]:
        return [{"role": "assistant", "content": reply.get("content") or []}]

    def tool_answers(self, answers: list[tuple[str, str]]) -> list[Message]:
        blocks = [{"type": "tool_result", "tool_use_id": call_id, "content": text} for call_id, text in answers]
        return [{"role": "user", "content": blocks}]

    def without_tool(self, reply: Reply, name: str) -> Reply:
        content = [b for b in reply.get("content") or [] if not (b.get("type") == "tool_use" and b.get("name") == name)]
        has_calls = any(b.get("type") == "tool_use" for b in content)
        stop = reply.get("stop_reason") if has_calls else "end_turn"
        return {**reply, "content": content, "stop_reason": stop}

    def tool_definition(self, name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "description": description, "input_schema": parameters}

    def tool_names(self, tools: list[Any]) -> list[str]:
        return [str(t.get("name")) for t in tools if isinstance(t, dict)]
