"""`langgraph.channels.delta` -> agent_runtime.channels."""

from agent_runtime.channels import DeltaChannel
from langgraph import _shim

__all__ = ["DeltaChannel"]
__getattr__ = _shim.module_getattr(__name__)
