"""`langgraph.pregel.types`: the public types of a run (agent_runtime.types)."""

from agent_runtime.types import (
    All,
    CachePolicy,
    PregelExecutableTask,
    PregelTask,
    RetryPolicy,
    StateSnapshot,
    StateUpdate,
    StreamMode,
    StreamWriter,
    default_retry_on,
)

__all__ = [
    "All",
    "CachePolicy",
    "PregelExecutableTask",
    "PregelTask",
    "RetryPolicy",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamWriter",
    "default_retry_on",
]
