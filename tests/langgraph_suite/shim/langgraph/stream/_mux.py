"""`langgraph.stream._mux` -> agent_runtime.stream.mux."""

from agent_runtime.stream.mux import StreamMux, TransformerFactory
from langgraph import _shim

__all__ = ["StreamMux", "TransformerFactory"]
__getattr__ = _shim.module_getattr(__name__)
