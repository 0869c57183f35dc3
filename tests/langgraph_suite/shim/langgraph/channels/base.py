"""`langgraph.channels.base` -> agent_runtime.channels."""

from agent_runtime.channels import BaseChannel, EmptyChannelError
from langgraph import _shim

__all__ = ["BaseChannel", "EmptyChannelError"]
__getattr__ = _shim.module_getattr(__name__)
