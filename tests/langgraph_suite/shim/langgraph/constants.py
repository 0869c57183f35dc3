"""`langgraph.constants` -> agent_runtime.types (and the stream tags of agent_runtime.streaming)."""

from agent_runtime.streaming import TAG_HIDDEN, TAG_NOSTREAM
from agent_runtime.types import END, START, Interrupt, Send
from langgraph import _shim

__all__ = ["END", "START", "TAG_HIDDEN", "TAG_NOSTREAM", "Interrupt", "Send"]
__getattr__ = _shim.module_getattr(__name__)
