"""What the gateway needs to know about one client-facing API shape (OpenAI Chat, Anthropic Messages)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from gateway.errors import GatewayError
from gateway.usage import Usage
from gateway.wire.sse import SSEEvent


def positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class StreamAccumulator(ABC):
    """Rebuilds the final response from a stream's events while they pass through."""

    @abstractmethod
    def feed(self, event: SSEEvent) -> str:
        """Take one event; return the text it adds (for stream observers), '' if none."""

    @abstractmethod
    def result(self) -> dict[str, Any]:
        """The response as the non-streaming API would have returned it."""


class WireFormat(ABC):
    name: str
    upstream_fields: frozenset[str]  # the public body fields a provider may receive (gateway/wire/fields.py)
    # The provider API (config.models.LEAN_WIRE_BY_PROVIDER) that takes this wire as is on the lean path;
    # None: the API of the same name.
    lean_wire: str | None = None
    # Whether the API's clients skip SSE comments (the final `: cachegate {...}` line); google-genai does not.
    sse_comments: bool = True
    # The body field holding the conversation's turns (bounded by gateway/wire/limits.py).
    history_field: str = "messages"
    # The headers that carry the gateway's request id on every answer: the names this API's SDKs read.
    request_id_headers: tuple[str, ...] = ("x-request-id",)
    # The status of the guard's block: one this API's clients show without retrying and without reading it
    # as a credentials problem (measured per client: docs/loop-guard.md, "Why this status").
    block_status: int = 400

    def output_cap(self, body: dict[str, Any]) -> int | None:
        """The most output tokens the request allows, if it says (budgets hold the worst case)."""
        return positive_int(body.get("max_tokens"))

    @abstractmethod
    def validate(self, body: Any, known: int = 0) -> None:
        """Raise a GatewayError (400) naming the first problem in a request body. `known`: how many of the
        history's first messages are those of a history that passed (gateway/history/validated.py): only the
        rest are checked, with what follows them."""

    @abstractmethod
    def error_body(self, error: GatewayError) -> dict[str, Any]: ...

    @abstractmethod
    def session_fallback(self, body: dict[str, Any]) -> str | None:
        """The agent session id carried in the body when no x-session-id header is sent."""

    @abstractmethod
    def text_reply(self, model: str, text: str, *, stop_reason: str = "stop") -> dict[str, Any]:
        """A complete assistant response with only text, made by the gateway itself."""

    @abstractmethod
    def replay_events(self, response: dict[str, Any], *, include_usage: bool = False) -> list[bytes]:
        """A complete response as the SSE events of its stream, for answers the gateway gives itself."""

    @abstractmethod
    def closing_events(self, partial: dict[str, Any]) -> list[bytes]:
        """Events that end a stream cut short by the gateway (after `partial`, the response so far)."""

    @abstractmethod
    def stream_error_event(self, error: GatewayError) -> bytes:
        """An error that happens after the stream started, as this API reports it in-stream."""

    @abstractmethod
    def is_usage_only(self, event: SSEEvent) -> bool:
        """A usage event the gateway asked for on the client's behalf (dropped unless requested)."""

    def usage_requested(self, body: dict[str, Any]) -> bool:
        """Whether the client reads the stream's usage (and so the cost fields the gateway adds to it). Only
        an OpenAI Chat client chooses (`stream_options.include_usage`); the other APIs always send usage."""
        return True

    @abstractmethod
    def accumulator(self) -> StreamAccumulator: ...

    @abstractmethod
    def usage(self, response: dict[str, Any]) -> Usage: ...

    @abstractmethod
    def with_zero_usage(self, response: dict[str, Any]) -> dict[str, Any]:
        """The response with usage reset: nothing reached a provider."""

    @abstractmethod
    def is_stream_done(self, event: SSEEvent) -> bool: ...

    def is_final_usage(self, event: SSEEvent) -> bool:
        """The stream's last usage event, where the gateway adds its cost fields (`with_usage_extra`).
        False for a wire that has no usage event able to carry extra fields."""
        return False

    def with_usage_extra(self, event: SSEEvent, extra: dict[str, Any]) -> bytes:
        """That event with `extra` added to its usage object (as usage's `cachegate` key)."""
        return event.raw

    # --- Loop guard (gateway/stages/guard.py): the conversation and the answer as the guard reads them ---

    # The StepParser format (agent_runtime/guard/steps.py) of `guard_history`'s messages.
    guard_format: str = "openai"

    def guard_history(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The conversation as messages in `guard_format`, for analysis only (never sent anywhere); None
        when the body holds no history."""
        messages = body.get(self.history_field)
        return messages if isinstance(messages, list) else None

    @abstractmethod
    def with_guard_note(self, body: dict[str, Any], text: str) -> dict[str, Any] | None:
        """`body` with `text` for the model added to its last user turn (copied, never changed in place),
        still a valid request; None when there is no such turn."""

    @abstractmethod
    def reply_text(self, response: dict[str, Any]) -> str:
        """The assistant text of a complete response."""

    @abstractmethod
    def reply_tool_calls(self, response: dict[str, Any]) -> int:
        """How many tool calls a complete response makes."""

    @abstractmethod
    def with_text_only(self, response: dict[str, Any], text: str) -> dict[str, Any]:
        """The response answering `text` alone: no tool calls, finished normally (a cut or final answer)."""

    @abstractmethod
    def with_function_tool(
        self, body: dict[str, Any], name: str, description: str, schema: dict[str, Any]
    ) -> dict[str, Any] | None:
        """`body` with one more function tool; None when it has no tools or already one named `name`."""

    @abstractmethod
    def tool_call(self, response: dict[str, Any], name: str) -> Any:
        """The arguments (a mapping or a JSON string) of the response's first call to `name`, else None."""
