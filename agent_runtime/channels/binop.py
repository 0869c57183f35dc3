"""`langgraph.channels.binop` (agent_runtime.channels.reducer)."""

from agent_runtime.channels.reducer import BinaryOperatorAggregate

__all__ = ["BinaryOperatorAggregate"]
