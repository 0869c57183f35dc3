"""`langgraph.channels.named_barrier_value` -> agent_runtime.channels."""

from agent_runtime.channels import NamedBarrierValue
from langgraph import _shim

__all__ = ["NamedBarrierValue"]
__getattr__ = _shim.module_getattr(__name__)
