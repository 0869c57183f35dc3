"""`langgraph.stream` -> agent_runtime.stream (the v3 streaming protocol)."""

from agent_runtime.stream import (
    AsyncGraphRunStream,
    AsyncSubgraphRunStream,
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    GraphRunStream,
    LifecyclePayload,
    LifecycleTransformer,
    ProtocolEvent,
    StreamChannel,
    StreamTransformer,
    SubgraphRunStream,
    SubgraphStatus,
    SubgraphTransformer,
    TasksTransformer,
    UpdatesTransformer,
)
from langgraph import _shim

__all__ = [
    "AsyncGraphRunStream",
    "AsyncSubgraphRunStream",
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "GraphRunStream",
    "LifecyclePayload",
    "LifecycleTransformer",
    "ProtocolEvent",
    "StreamChannel",
    "StreamTransformer",
    "SubgraphRunStream",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
]
__getattr__ = _shim.module_getattr(__name__)
