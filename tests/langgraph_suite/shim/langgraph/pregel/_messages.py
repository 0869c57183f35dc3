"""`langgraph.pregel._messages` -> agent_runtime.streaming.messages (the "messages" stream handlers)."""

from agent_runtime.graph.message import REMOVE_ALL_MESSAGES
from agent_runtime.graph.message import messages_delta_reducer as _messages_delta_reducer
from agent_runtime.streaming.messages import StreamMessagesHandler, StreamMessagesHandlerV2, graph_namespace
from langgraph import _shim

__all__ = [
    "REMOVE_ALL_MESSAGES",
    "StreamMessagesHandler",
    "StreamMessagesHandlerV2",
    "_messages_delta_reducer",
    "graph_namespace",
]
__getattr__ = _shim.module_getattr(__name__)
