"""`langgraph.pregel.main`: the low-level graph API (agent_runtime.pregel_api)."""

from agent_runtime.pregel_api import NodeBuilder, Pregel

__all__ = ["NodeBuilder", "Pregel"]
