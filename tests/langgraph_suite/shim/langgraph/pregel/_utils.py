"""`langgraph.pregel._utils`: what a node function reaches (agent_runtime.subgraph_detection)."""

from agent_runtime.subgraph_detection import function_nonlocals as get_function_nonlocals
from langgraph import _shim

__all__ = ["get_function_nonlocals"]
__getattr__ = _shim.module_getattr(__name__)
