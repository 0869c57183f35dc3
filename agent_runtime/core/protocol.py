"""LangGraph's task protocol: the config keys through which a task prepared by a runtime (see
agent_runtime/engine/executor.py) reaches its run (its writes, the stream, task calls), and the stream callback.
agent_runtime's own engine gives nodes these through the task context instead (engine/context.py);
the keys matter for tasks run with `run_with_retry` / `arun_with_retry`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# the config section and its checkpoint-namespace key are the engine's (engine/spec.py: CONF,
# CONFIG_KEY_CHECKPOINT_NS)

CONFIG_KEY_SEND = "__pregel_send"  # Callable[[Sequence[tuple[str, Any]]], None]: the task's writes
CONFIG_KEY_STREAM = "__pregel_stream"  # a StreamProtocol: the run's stream
CONFIG_KEY_CALL = "__pregel_call"  # schedules a task call (functional API)
CONFIG_KEY_TASK_ID = "__pregel_task_id"  # a graph run from a config with it is that task's subgraph
CONFIG_KEY_RUNTIME = "__pregel_runtime"  # the run's Runtime (agent_runtime/engine/runtime.py)
# a v3 event stream's run: its "messages" mode emits v2 (content-block) events
CONFIG_KEY_STREAM_MESSAGES_V2 = "__pregel_stream_messages_v2"
CONFIG_KEY_THREAD_ID = "thread_id"
CONFIG_KEY_CHECKPOINT_ID = "checkpoint_id"
CONFIG_KEY_TIMED_ATTEMPT_OBSERVER = "__pregel_timed_attempt_observer"  # see agent_runtime/engine/attempt_events.py
NS_SEP = "|"  # between the levels of a checkpoint namespace
NS_END = ":"  # between a level's node name and task id

StreamChunk = tuple[tuple[str, ...], str, Any]  # (namespace, mode, payload)


class StreamProtocol:
    """A run's stream as a task sees it: a callable taking chunks, and the modes it takes."""

    __slots__ = ("__call__", "modes")

    def __init__(self, __call__: Callable[[StreamChunk], None], modes: set[str]) -> None:
        self.__call__ = __call__  # type: ignore[method-assign]
        self.modes = modes
