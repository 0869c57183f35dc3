"""`langgraph.channels.any_value` (agent_runtime.channels.untracked)."""

from agent_runtime.channels.untracked import AnyValue

__all__ = ["AnyValue"]
