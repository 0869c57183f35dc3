"""`langgraph.graph.state`: the graph builder and the graph it compiles to."""

from agent_runtime.graph import StateGraph
from agent_runtime.pregel import CompiledGraph as CompiledStateGraph

__all__ = ["CompiledStateGraph", "StateGraph"]
