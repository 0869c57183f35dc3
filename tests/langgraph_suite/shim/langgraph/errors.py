"""`langgraph.errors` -> agent_runtime.errors."""

from agent_runtime.channels import EmptyChannelError
from agent_runtime.errors import (
    EmptyInputError,
    GraphInterrupt,
    GraphRecursionError,
    InvalidUpdateError,
    NodeInterrupt,
    NodeTimeoutError,
    ParentCommand,
    is_invalid_resume,
)
from langgraph import _shim

__all__ = [
    "EmptyChannelError",
    "EmptyInputError",
    "GraphInterrupt",
    "GraphRecursionError",
    "InvalidUpdateError",
    "NodeInterrupt",
    "NodeTimeoutError",
    "ParentCommand",
    "is_invalid_resume",
]
__getattr__ = _shim.module_getattr(__name__)
