"""`langgraph.stream._types` -> agent_runtime.stream.protocol."""

from agent_runtime.stream.protocol import ProtocolEvent, StreamTransformer, transformer_requires_async
from langgraph import _shim

__all__ = ["ProtocolEvent", "StreamTransformer", "transformer_requires_async"]
__getattr__ = _shim.module_getattr(__name__)
