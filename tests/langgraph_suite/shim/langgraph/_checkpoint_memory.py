"""`langgraph.checkpoint.memory`: agent_runtime's in-memory checkpointer under LangGraph's names."""

from agent_runtime.checkpoint import InMemoryCheckpointer, MemorySaver
from langgraph import _shim

InMemorySaver = InMemoryCheckpointer
__all__ = ["InMemorySaver", "MemorySaver"]
__getattr__ = _shim.module_getattr(__name__)
