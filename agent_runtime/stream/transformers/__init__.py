"""The built-in stream transformers (LangGraph's `langgraph.stream.transformers`). MessagesTransformer
needs langchain-core, so it is imported on first use."""

from typing import Any

from agent_runtime.stream.transformers.lifecycle import (
    LifecyclePayload,
    LifecycleTransformer,
    SubgraphStatus,
    TasksLifecycleBase,
)
from agent_runtime.stream.transformers.scoped import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    ScopedModeTransformer,
    TasksTransformer,
    UpdatesTransformer,
)
from agent_runtime.stream.transformers.subgraphs import SubgraphTransformer
from agent_runtime.stream.transformers.values import ValuesTransformer

__all__ = [
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "LifecyclePayload",
    "LifecycleTransformer",
    "MessagesTransformer",
    "ScopedModeTransformer",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksLifecycleBase",
    "TasksTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
]


def __getattr__(name: str) -> Any:
    if name == "MessagesTransformer":
        from agent_runtime.stream.transformers.messages import MessagesTransformer

        return MessagesTransformer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
