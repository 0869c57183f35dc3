"""`langgraph.channels.untracked_value` (agent_runtime.channels.untracked)."""

from agent_runtime.channels.untracked import UntrackedValue

__all__ = ["UntrackedValue"]
