"""`langgraph.callbacks` -> agent_runtime.callbacks (graph lifecycle callbacks)."""

from agent_runtime.callbacks import (
    GraphCallbackHandler,
    GraphInterruptEvent,
    GraphLifecycleEvent,
    GraphLifecycleStatus,
    GraphResumeEvent,
)
from agent_runtime.callbacks import GraphCallbackManager as _AsyncGraphCallbackManager
from agent_runtime.callbacks import GraphCallbackManager as _GraphCallbackManager
from agent_runtime.callbacks import get_graph_callback_manager_for_config as get_async_graph_callback_manager_for_config
from agent_runtime.callbacks import get_graph_callback_manager_for_config as get_sync_graph_callback_manager_for_config
from langgraph import _shim

__all__ = [
    "GraphCallbackHandler",
    "GraphInterruptEvent",
    "GraphLifecycleEvent",
    "GraphLifecycleStatus",
    "GraphResumeEvent",
    "_AsyncGraphCallbackManager",
    "_GraphCallbackManager",
    "get_async_graph_callback_manager_for_config",
    "get_sync_graph_callback_manager_for_config",
]
__getattr__ = _shim.module_getattr(__name__)
