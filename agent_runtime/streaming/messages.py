"""`stream_mode="messages"` (LangGraph's): `(message, metadata)` chunks of

* the chat models a node calls: each token as it is generated (an `AIMessageChunk`), or the whole
  message of a model that does not stream;
* the messages a node returns (in its update, a `Command`'s update or a list of them) that were not
  already streamed nor in the node's input.

The metadata is the model's (or the node's) run metadata: LangGraph's task keys (`langgraph_step`,
`langgraph_node`, `langgraph_triggers`, `langgraph_path`, `langgraph_checkpoint_ns`), the ids copied
from the configurable, the model's `ls_*` keys and its tags. A chunk's namespace is that of the graph the
model ran in: a subgraph's chunks show only with `subgraphs=True`, except in the graph whose stream holds
this handler (a node streaming a subgraph itself sees that subgraph's chunks).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar
from uuid import UUID, uuid4

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, GenerationChunk, LLMResult
from langchain_core.tracers._streaming import _StreamingCallbackHandler, _V2StreamingCallbackHandler
from pydantic import BaseModel

from agent_runtime.core.protocol import NS_SEP, StreamChunk
from agent_runtime.core.types import Command
from agent_runtime.streaming import TAG_HIDDEN, TAG_NOSTREAM

T = TypeVar("T")
Namespace = tuple[str, ...]
Meta = tuple[Namespace, dict[str, Any]]
PUSH_PATH = "__pregel_push"


def graph_namespace(metadata: Mapping[str, Any]) -> Namespace:
    """The namespace of the graph a task runs in: its checkpoint namespace without the task's own
    segment, nor one per enclosing `@task` call (a call nests its segment under its caller's; its
    `langgraph_path` is `(PUSH, <caller's path>, <index>, True)`, a Send task's ends in False)."""
    ns = tuple(str(metadata["langgraph_checkpoint_ns"]).split(NS_SEP))
    path = metadata.get("langgraph_path", ())
    drop = 1
    while len(path) == 4 and path[0] == PUSH_PATH and path[-1] is True:
        drop += 1
        path = path[1]
    return ns[:-drop]


def filter_to_user_tags(tags: Sequence[str] | None) -> list[str] | None:
    """The tags a user gave (not the `seq:step:N` bookkeeping of LangChain sequences), or None."""
    kept = [t for t in tags or () if not t.startswith("seq:step")]
    return kept or None


def _state_values(state: Any) -> Sequence[Any]:
    """The top-level values of a state (dict, pydantic model or dataclass)."""
    if isinstance(state, dict):
        return list(state.values())
    if isinstance(state, BaseModel):
        return [getattr(state, k) for k in type(state).model_fields]
    if is_dataclass(state) and not isinstance(state, type):
        return [getattr(state, f.name) for f in fields(state)]
    return ()


def _messages_in(value: Any) -> Iterator[BaseMessage]:
    """The messages of a node's output: a message, a list of them, or a state's values (and lists)."""
    if isinstance(value, BaseMessage):
        yield value
    elif isinstance(value, Sequence):
        yield from (v for v in value if isinstance(v, BaseMessage))
    else:
        for item in _state_values(value):
            if isinstance(item, BaseMessage):
                yield item
            elif isinstance(item, Sequence):
                yield from (v for v in item if isinstance(v, BaseMessage))


def _updates(response: Any) -> Iterator[Any]:
    """A node's state updates: its return value, a Command's update, each of a list with Commands."""
    if isinstance(response, Command):
        yield response.update
    elif isinstance(response, Sequence) and any(isinstance(v, Command) for v in response):
        for value in response:
            yield value.update if isinstance(value, Command) else value
    else:
        yield response


class StreamMessagesHandler(BaseCallbackHandler, _StreamingCallbackHandler):
    """Feeds the "messages" stream of a run. Its presence also makes chat models stream their tokens."""

    run_inline = True  # called in order, on the thread of the event

    def __init__(
        self, stream: Callable[[StreamChunk], None], subgraphs: bool, *, parent_ns: Namespace | None = None
    ) -> None:
        self.stream = stream
        self.subgraphs = subgraphs
        self.parent_ns = parent_ns  # the namespace of the graph whose stream this is
        self.metadata: dict[UUID, Meta] = {}  # the runs (models, nodes) whose output is streamed
        self.seen: set[int | str] = set()  # ids of the messages streamed or in a node's input

    @property
    def streams_only_its_graph(self) -> bool:
        return not self.subgraphs

    def _shown(self, ns: Namespace) -> bool:
        return self.subgraphs or not ns or ns == self.parent_ns

    def _emit(self, meta: Meta, message: BaseMessage, *, dedupe: bool = False) -> None:
        if dedupe and message.id in self.seen:
            return
        if message.id is None:
            message.id = str(uuid4())
        self.seen.add(message.id)
        self.stream((meta[0], "messages", (message, meta[1])))

    def _emit_output(self, meta: Meta, output: Any) -> None:
        for message in _messages_in(output):
            self._emit(meta, message, dedupe=True)

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[T]) -> AsyncIterator[T]:
        return output

    def tap_output_iter(self, run_id: UUID, output: Iterator[T]) -> Iterator[T]:
        return output

    # -- chat models --------------------------------------------------------------------------------
    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if not metadata or (tags and TAG_NOSTREAM in tags) or "langgraph_checkpoint_ns" not in metadata:
            return
        ns = graph_namespace(metadata)
        if not self._shown(ns):
            return
        user_tags = filter_to_user_tags(tags)
        if user_tags is not None:
            metadata["tags"] = user_tags
        self.metadata[run_id] = (ns, metadata)

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        meta = self.metadata.get(run_id)
        if meta is not None and isinstance(chunk, ChatGenerationChunk):
            self._emit(meta, chunk.message)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> Any:
        meta = self.metadata.pop(run_id, None)
        if meta is not None and response.generations and response.generations[0]:
            generation = response.generations[0][0]
            if isinstance(generation, ChatGeneration):
                self._emit(meta, generation.message, dedupe=True)

    def on_llm_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> Any:
        self.metadata.pop(run_id, None)

    # -- nodes --------------------------------------------------------------------------------------
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: dict[str, Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if not metadata or kwargs.get("name") != metadata.get("langgraph_node") or (tags and TAG_HIDDEN in tags):
            return
        ns = graph_namespace(metadata)
        if not self._shown(ns):
            return
        self.metadata[run_id] = (ns, metadata)
        for value in _state_values(inputs):  # the messages a node gets are not its output
            items = value if isinstance(value, Sequence) and not isinstance(value, str) else (value,)
            self.seen.update(m.id for m in items if isinstance(m, BaseMessage) and m.id is not None)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> Any:
        meta = self.metadata.pop(run_id, None)
        if meta is not None:
            for update in _updates(outputs):
                self._emit_output(meta, update)

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> Any:
        self.metadata.pop(run_id, None)


class StreamMessagesHandlerV2(StreamMessagesHandler, _V2StreamingCallbackHandler):
    """The "messages" handler of a v3 event stream: chat models send LangChain's protocol events
    (`on_stream_event`: message-start, content blocks, message-finish) instead of v1 token chunks, and
    tool results (ToolMessages) stay off the messages stream."""

    def __init__(
        self, stream: Callable[[StreamChunk], None], subgraphs: bool, *, parent_ns: Namespace | None = None
    ) -> None:
        super().__init__(stream, subgraphs, parent_ns=parent_ns)
        self._streamed_run_ids: set[UUID] = set()  # models that sent protocol events

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Ignored: v1 chunks (from a node calling `model.stream()` itself) are not v2 events."""

    def _emit_output(self, meta: Meta, output: Any) -> None:
        for message in _messages_in(output):
            if not isinstance(message, ToolMessage):
                self._emit(meta, message, dedupe=True)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> Any:
        meta = self.metadata.get(run_id)
        if meta is not None and response.generations and response.generations[0]:
            generation = response.generations[0][0]
            if isinstance(generation, ChatGeneration):
                if run_id in self._streamed_run_ids:  # streamed as events already: only remember its id
                    if generation.message.id is None:
                        generation.message.id = str(uuid4())
                    self.seen.add(generation.message.id)
                else:
                    self._emit(meta, generation.message, dedupe=True)
        self._streamed_run_ids.discard(run_id)
        self.metadata.pop(run_id, None)

    def on_llm_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> Any:
        self._streamed_run_ids.discard(run_id)
        super().on_llm_error(error, run_id=run_id, parent_run_id=parent_run_id, **kwargs)

    def on_stream_event(  # type: ignore[override]  # LangChain's protocol events, as dicts
        self,
        event: dict[str, Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A protocol event of a chat model, with the model's run id in its metadata (events of one
        message are correlated by it)."""
        meta = self.metadata.get(run_id)
        if meta is None:
            return
        if event.get("event") == "message-start":
            # the node returns the finished message too: it is not streamed twice
            self._streamed_run_ids.add(run_id)
            if event.get("message_id"):
                self.seen.add(event["message_id"])
        self.stream((meta[0], "messages", (event, {**meta[1], "run_id": str(run_id)})))


def push_to_streams(config: dict[str, Any], message: BaseMessage) -> None:
    """A message a node pushes (`push_message`) to the "messages" streams that show its graph."""
    callbacks = config.get("callbacks")
    handlers = getattr(callbacks, "handlers", callbacks) or ()
    metadata = config["metadata"]
    ns = graph_namespace(metadata)
    for handler in handlers:
        if isinstance(handler, StreamMessagesHandler) and handler._shown(ns):
            handler._emit((ns, metadata), message)
