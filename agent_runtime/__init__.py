"""Superstep (Pregel / BSP) agent runtime with a LangGraph-style StateGraph API.

Layers, bottom to top, each importing only from itself and those below (docs/runtime.md, "Layout";
tests/runtime/test_layers.py):

* guard: `guard/`, the loop guard (the gateway uses it too);
* core: `core/`, `errors`, `constants`, `channels/`, `callbacks`, `managed/`: the values a graph holds;
* checkpoint: `checkpoint/`, the saver interface, our savers and LangGraph's adapted;
* engine: `engine/`, `streaming/`, `runtime`, `config`: the superstep engine and what a node sees;
* stream: `stream/`, the v2/v3 stream protocol over a run's events;
* graph: `pregel/`, `graph/`, `func`: the compiled graph and the graph and functional APIs;
* prebuilt: `prebuilt/`, agents built on the graph API;
* faces: this package, `types`, `pregel.types`: LangGraph's modules re-exporting from several layers.
"""

from agent_runtime.checkpoint import (
    BaseCheckpointer,
    InMemoryCheckpointer,
    MemorySaver,
    RedisCheckpointer,
    SqliteCheckpointer,
)
from agent_runtime.core.types import (
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
from agent_runtime.engine.context import in_grace_step, interrupt, pending_nudge, record_action, report_usage
from agent_runtime.engine.guard_rails import GuardEvent, GuardRails
from agent_runtime.engine.report import RunReport
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


def __getattr__(name: str) -> object:
    """`MessagesState`, `add_messages`, `REMOVE_ALL_MESSAGES` load langchain-core only when asked for."""
    if name in ("MessagesState", "add_messages", "REMOVE_ALL_MESSAGES"):
        from agent_runtime.graph import message

        return getattr(message, name)
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
