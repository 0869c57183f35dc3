"""`langgraph.pregel` -> agent_runtime.pregel.main (the low-level `Pregel` / `NodeBuilder` API)."""

from agent_runtime.pregel.main import NodeBuilder, Pregel
from langgraph import _shim

__all__ = ["NodeBuilder", "Pregel"]
__getattr__ = _shim.module_getattr(__name__)
