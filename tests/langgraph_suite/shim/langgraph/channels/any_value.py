"""`langgraph.channels.any_value` -> agent_runtime.channels."""

from agent_runtime.channels import AnyValue
from langgraph import _shim

__all__ = ["AnyValue"]
__getattr__ = _shim.module_getattr(__name__)
