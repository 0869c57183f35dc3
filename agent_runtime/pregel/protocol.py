"""`langgraph.pregel.protocol`: the stream protocol of a run (agent_runtime.core.protocol)."""

from agent_runtime.core.protocol import StreamProtocol

__all__ = ["StreamProtocol"]
