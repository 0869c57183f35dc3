"""`langgraph.stream._convert` -> agent_runtime.stream.convert."""

from agent_runtime.stream.convert import convert_to_protocol_event
from langgraph import _shim

__all__ = ["convert_to_protocol_event"]
__getattr__ = _shim.module_getattr(__name__)
