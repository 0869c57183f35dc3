"""`langgraph.channels.untracked_value` -> agent_runtime.channels."""

from agent_runtime.channels import UntrackedValue
from langgraph import _shim

__all__ = ["UntrackedValue"]
__getattr__ = _shim.module_getattr(__name__)
