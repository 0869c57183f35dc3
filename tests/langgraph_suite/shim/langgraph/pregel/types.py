"""`langgraph.pregel.types` -> agent_runtime.types."""

from agent_runtime.types import PregelTask, StateSnapshot
from langgraph import _shim

__all__ = ["PregelTask", "StateSnapshot"]
__getattr__ = _shim.module_getattr(__name__)
