"""`langgraph.pregel`: agent_runtime has no low-level Pregel / NodeBuilder API (all names are stubs)."""

from langgraph import _shim

__getattr__ = _shim.module_getattr(__name__)
