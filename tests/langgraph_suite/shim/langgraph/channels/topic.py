"""`langgraph.channels.topic` -> agent_runtime.channels."""

from agent_runtime.channels import Topic
from langgraph import _shim

__all__ = ["Topic"]
__getattr__ = _shim.module_getattr(__name__)
