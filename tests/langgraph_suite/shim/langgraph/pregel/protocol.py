"""`langgraph.pregel.protocol` -> agent_runtime.core.protocol (the stream callback of the task protocol)."""

from agent_runtime.core.protocol import StreamProtocol
from langgraph import _shim

__all__ = ["StreamProtocol"]
__getattr__ = _shim.module_getattr(__name__)
