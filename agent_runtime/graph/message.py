"""Chat messages as state: `add_messages` and `MessagesState`, LangGraph's (langgraph.graph.message).

`add_messages(left, right)` merges two lists of messages (LangChain message objects, or anything
`langchain_core.messages.convert_to_messages` takes: dicts, (role, content) tuples, strings): messages
without an id get one; a message whose id is already in `left` replaces it; `RemoveMessage(id=...)`
deletes that message, `RemoveMessage(id=REMOVE_ALL_MESSAGES)` everything before it. Needs langchain-core
(LangGraph's own dependency); importing this module without it raises ImportError.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Annotated, Any, TypedDict

from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    BaseMessageChunk,
    RemoveMessage,
    convert_to_messages,
    convert_to_openai_messages,
    message_chunk_to_message,
)

from agent_runtime.core.deprecation import LangGraphDeprecatedSinceV10
from agent_runtime.graph.state import StateGraph

REMOVE_ALL_MESSAGES = "__remove_all__"
Messages = list[Any] | Any


def _coerce(messages: Sequence[Any]) -> list[BaseMessage]:
    if all(isinstance(m, BaseMessage) and not isinstance(m, BaseMessageChunk) for m in messages):
        return list(messages)
    return [message_chunk_to_message(m) for m in convert_to_messages(messages)]  # type: ignore[arg-type]


def _merge(left: Messages, right: Messages, *, format: str | None = None) -> list[BaseMessage]:
    merged = _merged(left, right)
    if format == "langchain-openai":  # contents as OpenAI's: strings, text and image_url blocks
        return convert_to_messages(convert_to_openai_messages(merged))  # type: ignore[return-value]
    if format:
        raise ValueError(f"Unrecognized {format=}. Expected one of 'langchain-openai', None.")
    return merged


def _merged(left: Messages, right: Messages) -> list[BaseMessage]:
    merged = _coerce(left if isinstance(left, list) else [left])
    incoming = _coerce(right if isinstance(right, list) else [right])
    for message in merged:
        if message.id is None:
            message.id = str(uuid.uuid4())
    remove_all: int | None = None
    for index, message in enumerate(incoming):
        if message.id is None:
            message.id = str(uuid.uuid4())
        if isinstance(message, RemoveMessage) and message.id == REMOVE_ALL_MESSAGES:
            remove_all = index
    if remove_all is not None:
        return incoming[remove_all + 1 :]
    position = {message.id: index for index, message in enumerate(merged)}
    removed: set[str] = set()
    for message in incoming:
        found = position.get(message.id)
        if found is None:
            if isinstance(message, RemoveMessage):
                raise ValueError(f"Attempting to delete a message with an ID that doesn't exist ('{message.id}')")
            position[message.id] = len(merged)
            merged.append(message)
        elif isinstance(message, RemoveMessage):
            removed.add(str(message.id))
        else:
            removed.discard(str(message.id))
            merged[found] = message
    return [m for m in merged if m.id not in removed] if removed else merged


def add_messages(left: Messages = None, right: Messages = None, **options: Any) -> Any:
    """Merge `right` into `left` (module docstring). With only keyword options, the reducer with them
    bound (`Annotated[list, add_messages(format=...)]`), as in LangGraph."""
    if left is not None and right is not None:
        return _merge(left, right, **options)
    if left is not None or right is not None:
        raise ValueError("add_messages needs both 'left' and 'right' (or neither, to bind options)")
    reducer: Callable[[Messages, Messages], list[BaseMessage]] = partial(_merge, **options)
    return reducer


def push_message(message: Any, *, state_key: str | None = "messages") -> BaseMessage:
    """Stream a message from inside a node, as a chat model's would be, to the `"messages"` streams
    that show the node's graph; and write it to the state key `state_key` (unless None), before the
    node's update. The message needs an id."""
    from agent_runtime.engine import context
    from agent_runtime.streaming.messages import push_to_streams

    scratch = context.current()
    pushed = convert_to_messages([message])[0]
    if pushed.id is None:
        raise ValueError("Message ID is required")
    if scratch.config is not None:  # the run has callbacks, maybe a messages stream
        push_to_streams(scratch.config, pushed)
    if state_key:
        scratch.writes = [*(scratch.writes or ()), (state_key, pushed)]
    return pushed


class MessagesState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def messages_delta_reducer(state: list[Any], writes: Sequence[Any]) -> list[BaseMessage]:
    """The batch reducer of a messages `DeltaChannel` (LangGraph's `_messages_delta_reducer`): each write
    is a list of messages or one message-like (a tuple is one message); a message whose id is known
    replaces it, `RemoveMessage(id)` deletes it (an unknown id is ignored), `REMOVE_ALL_MESSAGES`
    drops everything before it. Messages without an id are appended as they are."""
    flat: list[Any] = []
    for write in writes:
        flat.extend(write) if isinstance(write, list) else flat.append(write)
    current = list(state) if state and isinstance(state[0], BaseMessage) else convert_to_messages(state)
    incoming = convert_to_messages(flat)
    for index in range(len(incoming) - 1, -1, -1):
        message = incoming[index]
        if isinstance(message, RemoveMessage) and message.id == REMOVE_ALL_MESSAGES:
            current, incoming = [], incoming[index + 1 :]
            break
    position = {m.id: i for i, m in enumerate(current) if m.id is not None}
    result: list[BaseMessage | None] = list(current)
    for message in incoming:
        found = position.get(message.id) if message.id is not None else None
        if message.id is None:
            result.append(message)
        elif isinstance(message, RemoveMessage):
            if found is not None:
                result[found] = None
                del position[message.id]
        elif found is not None:
            result[found] = message
        else:
            position[message.id] = len(result)
            result.append(message)
    return [m for m in result if m is not None]


class MessageGraph(StateGraph[list[AnyMessage]]):
    """Deprecated (LangGraph 1.0): a graph whose whole state is one list of messages (a root state
    merged with add_messages); nodes take the list and return messages. Use a StateGraph with a
    `messages` key (MessagesState) instead."""

    def __init__(self) -> None:
        warnings.warn(
            "MessageGraph is deprecated in LangGraph v1.0.0, to be removed in v2.0.0. "
            "Please use StateGraph with a `messages` key instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        super().__init__(Annotated[list[AnyMessage], add_messages])  # type: ignore[arg-type]
