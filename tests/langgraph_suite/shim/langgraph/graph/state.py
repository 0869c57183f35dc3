"""`langgraph.graph.state` -> agent_runtime.graph / agent_runtime.pregel / agent_runtime.schema."""

from agent_runtime.graph import StateGraph
from agent_runtime.pregel import CompiledGraph as CompiledStateGraph
from agent_runtime.schema import channel_for as _get_channel
from langgraph import _shim

__all__ = ["CompiledStateGraph", "StateGraph", "_get_channel"]
__getattr__ = _shim.module_getattr(__name__)
