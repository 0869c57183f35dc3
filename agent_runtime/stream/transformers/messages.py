"""MessagesTransformer: `run.messages`, one langchain-core `ChatModelStream` per chat-model call of
the run's own scope (LangGraph's). Fed by `"messages"` events whose data is `(payload, metadata)`:

* a content-block protocol event (a dict with `"event"`), routed by `metadata["run_id"]`:
  `message-start` opens a stream (not for tool results, which have their own projection),
  `message-finish` ends it;
* a whole message a node returned (not a chunk, not a ToolMessage), replayed as an already complete
  stream.

Legacy `AIMessageChunk` tokens are not projected. Needs langchain-core (imported with this module)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.language_models._compat_bridge import message_to_events
from langchain_core.language_models.chat_model_stream import AsyncChatModelStream, ChatModelStream
from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage

from agent_runtime.stream.channel import StreamChannel
from agent_runtime.stream.protocol import ProtocolEvent, StreamTransformer

AnyChatModelStream = ChatModelStream | AsyncChatModelStream


class MessagesTransformer(StreamTransformer):
    _native = True
    required_stream_modes = ("messages",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[AnyChatModelStream] = StreamChannel()
        self._by_run: dict[str, AnyChatModelStream] = {}  # open streams by the chat model's run id
        self._ignored_runs: set[str] = set()  # tool-result messages, until their message-finish
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        self._scope_list = list(scope)

    def init(self) -> dict[str, Any]:
        return {"messages": self._log}

    def _bind_pump(self, fn: Callable[[], bool]) -> None:
        """The run's pump: a ChatModelStream's cursors drive the run when they run dry."""
        self._pump_fn = fn

    def _bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        self._apump_fn = fn

    def _make_stream(self, *, node: str | None, message_id: str | None) -> AnyChatModelStream:
        """An async stream under an async run (or when no pump is bound), a sync one under a sync run."""
        if self._apump_fn is None and self._pump_fn is not None:
            stream = ChatModelStream(namespace=[], node=node, message_id=message_id)
            stream.set_request_more(self._pump_fn)
            return stream
        astream = AsyncChatModelStream(namespace=[], node=node, message_id=message_id)
        if self._apump_fn is not None:
            astream.set_arequest_more(self._apump_fn)
        return astream

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "messages" or event["params"]["namespace"] != self._scope_list:
            return True
        payload, metadata = event["params"]["data"]
        node: str | None = metadata.get("langgraph_node")
        run_id = str(metadata.get("run_id", "")) if metadata else ""
        if isinstance(payload, dict) and "event" in payload:
            self._route_protocol_event(payload, run_id, node)
        elif isinstance(payload, BaseMessage) and not isinstance(payload, (AIMessageChunk, ToolMessage)):
            self._route_whole_message(payload, node)
        return True

    def _route_protocol_event(self, event: dict[str, Any], run_id: str, node: str | None) -> None:
        kind = event.get("event")
        if kind == "message-start":
            if event.get("role") == "tool":
                self._ignored_runs.add(run_id)
                return
            message_id = event.get("message_id")
            stream = self._make_stream(node=node, message_id=str(message_id) if message_id is not None else None)
            self._by_run[run_id] = stream
            self._log.push(stream)
            stream.dispatch(event)  # type: ignore[arg-type]
        elif run_id in self._ignored_runs:
            if kind == "message-finish":
                self._ignored_runs.discard(run_id)
        elif run_id in self._by_run:
            self._by_run[run_id].dispatch(event)  # type: ignore[arg-type]
            if kind == "message-finish":
                del self._by_run[run_id]

    def _route_whole_message(self, message: BaseMessage, node: str | None) -> None:
        stream = self._make_stream(node=node, message_id=message.id)
        for event in message_to_events(message, message_id=message.id):
            stream.dispatch(event)
        self._log.push(stream)

    def finalize(self) -> None:
        self._by_run.clear()
        self._ignored_runs.clear()

    def fail(self, err: BaseException) -> None:
        """Streams still open fail with the run's error."""
        for stream in self._by_run.values():
            stream.fail(err)
        self._by_run.clear()
        self._ignored_runs.clear()
