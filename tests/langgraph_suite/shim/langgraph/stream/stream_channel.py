"""`langgraph.stream.stream_channel` -> agent_runtime.stream.channel."""

from agent_runtime.stream.channel import StreamChannel
from langgraph import _shim

__all__ = ["StreamChannel"]
__getattr__ = _shim.module_getattr(__name__)
