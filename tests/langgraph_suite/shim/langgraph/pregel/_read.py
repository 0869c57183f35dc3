"""`langgraph.pregel._read` -> agent_runtime.pregel.main (a built Pregel node)."""

from agent_runtime.pregel.main import PregelNode
from langgraph import _shim

__all__ = ["PregelNode"]
__getattr__ = _shim.module_getattr(__name__)
