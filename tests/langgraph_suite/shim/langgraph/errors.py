"""`langgraph.errors` -> agent_runtime.errors."""

from agent_runtime.channels import EmptyChannelError
from agent_runtime.errors import (
    EmptyInputError,
    GraphBubbleUp,
    GraphDrained,
    GraphInterrupt,
    GraphRecursionError,
    InvalidUpdateError,
    NodeCancelledError,
    NodeError,
    NodeInterrupt,
    NodeTimeoutError,
    ParentCommand,
    UnknownInterruptError,
    is_invalid_resume,
)
from langgraph import _shim

__all__ = [
    "EmptyChannelError",
    "EmptyInputError",
    "GraphBubbleUp",
    "GraphDrained",
    "GraphInterrupt",
    "GraphRecursionError",
    "InvalidUpdateError",
    "NodeCancelledError",
    "NodeError",
    "NodeInterrupt",
    "NodeTimeoutError",
    "ParentCommand",
    "UnknownInterruptError",
    "is_invalid_resume",
]
__getattr__ = _shim.module_getattr(__name__)
