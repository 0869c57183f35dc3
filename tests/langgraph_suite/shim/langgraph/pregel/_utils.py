"""`langgraph.pregel._utils` -> agent_runtime.graph.introspect (finding the graph a node's function invokes)."""

from agent_runtime.graph.introspect import function_nonlocals as get_function_nonlocals
from langgraph import _shim

__all__ = ["get_function_nonlocals"]
__getattr__ = _shim.module_getattr(__name__)
