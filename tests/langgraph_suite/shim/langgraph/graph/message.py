"""`langgraph.graph.message` -> agent_runtime.graph.message."""

from agent_runtime.graph.message import REMOVE_ALL_MESSAGES, MessageGraph, MessagesState, add_messages, push_message
from agent_runtime.graph.message import messages_delta_reducer as _messages_delta_reducer
from langgraph import _shim

__all__ = [
    "REMOVE_ALL_MESSAGES",
    "MessageGraph",
    "MessagesState",
    "_messages_delta_reducer",
    "add_messages",
    "push_message",
]
__getattr__ = _shim.module_getattr(__name__)
