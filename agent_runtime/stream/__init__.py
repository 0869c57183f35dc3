"""The v3 streaming protocol (LangGraph's `langgraph.stream`): `graph.stream_events(input,
version="v3")` returns a run stream whose projections (`run.values`, `run.lifecycle`,
`run.subgraphs`, ... and a user's own StreamTransformers') the caller iterates to drive the run."""

from agent_runtime.stream.channel import StreamChannel
from agent_runtime.stream.protocol import ProtocolEvent, StreamTransformer
from agent_runtime.stream.run_stream import (
    AsyncGraphRunStream,
    AsyncSubgraphRunStream,
    GraphRunStream,
    SubgraphRunStream,
)
from agent_runtime.stream.transformers import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    LifecyclePayload,
    LifecycleTransformer,
    SubgraphStatus,
    SubgraphTransformer,
    TasksTransformer,
    UpdatesTransformer,
)

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
