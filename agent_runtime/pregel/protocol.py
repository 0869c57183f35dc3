"""`langgraph.pregel.protocol`: the stream protocol of a run (agent_runtime.protocol)."""

from agent_runtime.protocol import StreamProtocol

__all__ = ["StreamProtocol"]
