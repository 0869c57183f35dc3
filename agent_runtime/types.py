"""`langgraph.types`: the public value types of a graph (agent_runtime.core.types), and the names
LangGraph's module also gives that live in the layers above: `interrupt` (the engine's task context),
`StreamWriter` (the runtime), `CachePolicy` (node caching), `PregelExecutableTask` (a prepared task) and
`Checkpointer` (the saver interface)."""

from agent_runtime.checkpoint.base import BaseCheckpointer as Checkpointer
from agent_runtime.core.types import (
    END,
    START,
    All,
    Command,
    Durability,
    GraphOutput,
    Interrupt,
    IsLastStep,
    IsLastStepManager,
    Overwrite,
    PregelTask,
    RemainingSteps,
    RemainingStepsManager,
    RetryPolicy,
    Send,
    StateSnapshot,
    StateUpdate,
    StopReason,
    StreamMode,
    Terminate,
    TimeoutPolicy,
    TracePolicy,
    default_retry_on,
    omit_payload,
)
from agent_runtime.engine.context import interrupt
from agent_runtime.engine.executor import ExecutableTask as PregelExecutableTask
from agent_runtime.engine.node_cache import CachePolicy
from agent_runtime.engine.runtime import StreamWriter

__all__ = [
    "END",
    "START",
    "All",
    "CachePolicy",
    "Checkpointer",
    "Command",
    "Durability",
    "GraphOutput",
    "Interrupt",
    "IsLastStep",
    "IsLastStepManager",
    "Overwrite",
    "PregelExecutableTask",
    "PregelTask",
    "RemainingSteps",
    "RemainingStepsManager",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "StopReason",
    "StreamMode",
    "StreamWriter",
    "Terminate",
    "TimeoutPolicy",
    "TracePolicy",
    "default_retry_on",
    "interrupt",
    "omit_payload",
]
