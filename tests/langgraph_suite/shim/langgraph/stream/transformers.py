"""`langgraph.stream.transformers` -> agent_runtime.stream.transformers."""

from agent_runtime.stream.transformers import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    LifecyclePayload,
    LifecycleTransformer,
    SubgraphStatus,
    SubgraphTransformer,
    TasksLifecycleBase,
    TasksTransformer,
    UpdatesTransformer,
    ValuesTransformer,
)
from agent_runtime.stream.transformers.messages import MessagesTransformer
from langgraph import _shim

# LangGraph's private base of the two lifecycle transformers (tests subclass it)
_TasksLifecycleBase = TasksLifecycleBase

__all__ = [
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "LifecyclePayload",
    "LifecycleTransformer",
    "MessagesTransformer",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
    "_TasksLifecycleBase",
]
__getattr__ = _shim.module_getattr(__name__)
