"""`langgraph.channels.ephemeral_value` -> agent_runtime.channels."""

from agent_runtime.channels import EphemeralValue
from langgraph import _shim

__all__ = ["EphemeralValue"]
__getattr__ = _shim.module_getattr(__name__)
