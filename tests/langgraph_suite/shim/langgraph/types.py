"""`langgraph.types` -> agent_runtime.types."""

from typing import Literal

from agent_runtime.engine.context import interrupt
from agent_runtime.engine.executor import ExecutableTask as PregelExecutableTask
from agent_runtime.engine.node_cache import CachePolicy
from agent_runtime.runtime import StreamWriter
from agent_runtime.types import (
    Command,
    GraphOutput,
    Interrupt,
    Overwrite,
    PregelTask,
    RetryPolicy,
    Send,
    StateSnapshot,
    StateUpdate,
    TimeoutPolicy,
    TracePolicy,
    omit_payload,
)
from langgraph import _shim

# Pure type aliases (no behaviour): the values agent_runtime accepts.
Durability = Literal["sync", "async", "exit"]
StreamMode = Literal["values", "updates", "debug", "custom", "checkpoints", "tasks", "messages", "tools"]

__all__ = [
    "CachePolicy",
    "Command",
    "Durability",
    "GraphOutput",
    "Interrupt",
    "Overwrite",
    "PregelExecutableTask",
    "PregelTask",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamWriter",
    "TimeoutPolicy",
    "TracePolicy",
    "interrupt",
    "omit_payload",
]
__getattr__ = _shim.module_getattr(__name__)
