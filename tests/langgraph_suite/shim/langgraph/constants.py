"""`langgraph.constants` -> agent_runtime.types."""

from agent_runtime.types import END, START, Interrupt, Send
from langgraph import _shim

__all__ = ["END", "START", "Interrupt", "Send"]
__getattr__ = _shim.module_getattr(__name__)
