"""`stream_mode="tools"` (LangGraph's): the lifecycle of the LangChain tools a node calls, as dicts keyed
by `tool_call_id` (the tool call's id, or the tool run's id): `tool-started` (`tool_name`, `input`),
`tool-output-delta` (`delta`: what the tool streams while it runs), `tool-finished` (`output`) and
`tool-error` (`message`). An interrupted tool is paused, not failed: it reports again when it re-runs.
Namespaces as for "messages" (streaming/messages.py).

While a tool runs, `tool_call_writer` holds the function streaming its deltas (LangGraph's prebuilt
`ToolRuntime.emit_output_delta` reads it from `langgraph.pregel._tools._tool_call_writer`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import suppress
from contextvars import ContextVar, Token
from typing import Any, TypeVar
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers._streaming import _StreamingCallbackHandler

from agent_runtime.core.protocol import StreamChunk
from agent_runtime.errors import GraphDrained, GraphInterrupt
from agent_runtime.streaming import TAG_NOSTREAM
from agent_runtime.streaming.messages import Namespace, graph_namespace

T = TypeVar("T")
ToolCallWriter = Callable[[Any], None]

tool_call_writer: ContextVar[ToolCallWriter | None] = ContextVar("agent_runtime_tool_call_writer", default=None)


class StreamToolCallHandler(BaseCallbackHandler, _StreamingCallbackHandler):
    """Feeds the "tools" stream of a run from LangChain's `on_tool_*` callbacks."""

    run_inline = True  # called in order, on the thread of the event (the writer is a context variable)

    def __init__(
        self, stream: Callable[[StreamChunk], None], subgraphs: bool, *, parent_ns: Namespace | None = None
    ) -> None:
        self.stream = stream
        self.subgraphs = subgraphs
        self.parent_ns = parent_ns  # the namespace of the graph whose stream this is
        # on_tool_end has no tool_call_id: the running calls by run id (namespace, call id, writer token)
        self._calls: dict[UUID, tuple[Namespace, str, Token[ToolCallWriter | None]]] = {}

    @property
    def streams_only_its_graph(self) -> bool:
        return not self.subgraphs

    def _namespace(self, metadata: dict[str, Any] | None, tags: list[str] | None) -> Namespace | None:
        """Where a tool call streams, or None when it does not (outside a graph, `nostream`, a subgraph's
        call that this stream does not show)."""
        if not metadata or (tags and TAG_NOSTREAM in tags):
            return None
        ns = graph_namespace(metadata) if metadata.get("langgraph_checkpoint_ns") else ()
        if not self.subgraphs and ns and ns != self.parent_ns:
            return None
        return ns

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        ns = self._namespace(metadata, tags)
        if ns is None:
            return
        call_id = kwargs.get("tool_call_id") or str(run_id)

        def write_delta(delta: Any) -> None:
            self.stream((ns, "tools", {"event": "tool-output-delta", "tool_call_id": call_id, "delta": delta}))

        self._calls[run_id] = (ns, call_id, tool_call_writer.set(write_delta))
        payload: dict[str, Any] = {
            "event": "tool-started",
            "tool_call_id": call_id,
            "tool_name": (serialized or {}).get("name") or kwargs.get("name") or "",
        }
        if inputs is not None:
            payload["input"] = inputs
        self.stream((ns, "tools", payload))

    def _ended(self, run_id: UUID) -> tuple[Namespace, str] | None:
        call = self._calls.pop(run_id, None)
        if call is None:
            return None
        ns, call_id, token = call
        with suppress(ValueError):  # ended in another context than it started (a thread handoff)
            tool_call_writer.reset(token)
        return ns, call_id

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> Any:
        call = self._ended(run_id)
        if call is not None:
            ns, call_id = call
            self.stream((ns, "tools", {"event": "tool-finished", "tool_call_id": call_id, "output": output}))

    def on_tool_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> Any:
        call = self._ended(run_id)
        # an interrupted or drained tool is paused, not failed: it runs again on resume
        if call is not None and not isinstance(error, GraphInterrupt | GraphDrained):
            ns, call_id = call
            self.stream((ns, "tools", {"event": "tool-error", "tool_call_id": call_id, "message": str(error)}))

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[T]) -> AsyncIterator[T]:
        return output

    def tap_output_iter(self, run_id: UUID, output: Iterator[T]) -> Iterator[T]:
        return output
