"""`langgraph.graph.state` -> agent_runtime.graph / agent_runtime.pregel / agent_runtime.core.schema."""

from agent_runtime.core.schema import channel_for as _get_channel
from agent_runtime.core.schema import field_channel as _is_field_channel
from agent_runtime.core.schema import warn_invalid_state_schema as _warn_invalid_state_schema
from agent_runtime.graph import StateGraph
from agent_runtime.graph.node_schemas import node_name as _get_node_name
from agent_runtime.pregel import CompiledGraph as CompiledStateGraph
from langgraph import _shim

__all__ = [
    "CompiledStateGraph",
    "StateGraph",
    "_get_channel",
    "_get_node_name",
    "_is_field_channel",
    "_warn_invalid_state_schema",
]
__getattr__ = _shim.module_getattr(__name__)
