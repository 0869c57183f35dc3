"""`langgraph.pregel._read` -> agent_runtime.pregel_api (a built Pregel node)."""

from agent_runtime.pregel_api import PregelNode
from langgraph import _shim

__all__ = ["PregelNode"]
__getattr__ = _shim.module_getattr(__name__)
