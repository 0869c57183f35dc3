"""`langgraph.pregel._tools` -> agent_runtime.streaming.tools (the "tools" stream handler)."""

from agent_runtime.streaming.tools import StreamToolCallHandler, ToolCallWriter
from agent_runtime.streaming.tools import tool_call_writer as _tool_call_writer
from langgraph import _shim

__all__ = ["StreamToolCallHandler", "ToolCallWriter", "_tool_call_writer"]
__getattr__ = _shim.module_getattr(__name__)
