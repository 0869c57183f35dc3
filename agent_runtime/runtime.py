"""`langgraph.runtime`: the run-scoped context, store and stream writer a node receives
(agent_runtime.engine.runtime), and the caller's handle to stop a run (agent_runtime.engine.control)."""

from agent_runtime.engine.control import RunControl
from agent_runtime.engine.runtime import (
    CONFIG_KEY_RUNTIME,
    DEFAULT_RUNTIME,
    ExecutionInfo,
    Runtime,
    ServerInfo,
    StreamWriter,
    get_runtime,
)

__all__ = [
    "CONFIG_KEY_RUNTIME",
    "DEFAULT_RUNTIME",
    "ExecutionInfo",
    "RunControl",
    "Runtime",
    "ServerInfo",
    "StreamWriter",
    "get_runtime",
]
