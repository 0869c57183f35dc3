"""`langgraph.graph.state` -> agent_runtime.graph / agent_runtime.pregel."""

from agent_runtime.graph import StateGraph
from agent_runtime.pregel import CompiledGraph as CompiledStateGraph
from langgraph import _shim

__all__ = ["CompiledStateGraph", "StateGraph"]
__getattr__ = _shim.module_getattr(__name__)
