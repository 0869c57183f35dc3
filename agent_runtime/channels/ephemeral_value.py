"""`langgraph.channels.ephemeral_value` (agent_runtime.channels.ephemeral)."""

from agent_runtime.channels.ephemeral import EphemeralValue

__all__ = ["EphemeralValue"]
