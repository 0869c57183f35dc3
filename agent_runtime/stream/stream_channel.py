"""`langgraph.stream.stream_channel` (agent_runtime.stream.channel)."""

from agent_runtime.stream.channel import StreamChannel

__all__ = ["StreamChannel"]
