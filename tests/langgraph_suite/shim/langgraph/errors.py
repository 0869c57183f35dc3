"""`langgraph.errors` -> agent_runtime.errors."""

from agent_runtime.channels import EmptyChannelError
from agent_runtime.errors import (
    EmptyInputError,
    GraphInterrupt,
    GraphRecursionError,
    InvalidUpdateError,
    NodeTimeoutError,
    ParentCommand,
)
from langgraph import _shim

__all__ = [
    "EmptyChannelError",
    "EmptyInputError",
    "GraphInterrupt",
    "GraphRecursionError",
    "InvalidUpdateError",
    "NodeTimeoutError",
    "ParentCommand",
]
__getattr__ = _shim.module_getattr(__name__)
