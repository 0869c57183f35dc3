"""Superstep (Pregel / BSP) agent runtime with a LangGraph-style StateGraph API."""

from agent_runtime.checkpoint import (
    BaseCheckpointer,
    InMemoryCheckpointer,
    MemorySaver,
    RedisCheckpointer,
    SqliteCheckpointer,
)
from agent_runtime.engine.context import in_grace_step, interrupt, pending_nudge, record_action, report_usage
from agent_runtime.engine.guard_rails import GuardEvent, GuardRails
from agent_runtime.errors import (
    GraphCompileError,
    GraphInterrupt,
    GraphRecursionError,
    InvalidUpdateError,
    TopologyError,
)
from agent_runtime.func import entrypoint, task
from agent_runtime.graph import StateGraph
from agent_runtime.pregel import CompiledGraph
from agent_runtime.report import RunReport
from agent_runtime.types import (
    END,
    START,
    Command,
    Interrupt,
    IsLastStep,
    Overwrite,
    RemainingSteps,
    RetryPolicy,
    Send,
    StateSnapshot,
    StopReason,
    Terminate,
)


def __getattr__(name: str) -> object:
    """`MessagesState`, `add_messages`, `REMOVE_ALL_MESSAGES` load langchain-core only when asked for."""
    if name in ("MessagesState", "add_messages", "REMOVE_ALL_MESSAGES"):
        from agent_runtime import messages

        return getattr(messages, name)
    raise AttributeError(f"module 'agent_runtime' has no attribute {name!r}")


__all__ = [
    "END",
    "START",
    "BaseCheckpointer",
    "Command",
    "CompiledGraph",
    "GraphCompileError",
    "GraphInterrupt",
    "GraphRecursionError",
    "GuardEvent",
    "GuardRails",
    "InMemoryCheckpointer",
    "Interrupt",
    "InvalidUpdateError",
    "IsLastStep",
    "MemorySaver",
    "Overwrite",
    "RedisCheckpointer",
    "RemainingSteps",
    "RetryPolicy",
    "RunReport",
    "Send",
    "SqliteCheckpointer",
    "StateGraph",
    "StateSnapshot",
    "StopReason",
    "Terminate",
    "TopologyError",
    "entrypoint",
    "in_grace_step",
    "interrupt",
    "pending_nudge",
    "record_action",
    "report_usage",
    "task",
]
