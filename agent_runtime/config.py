"""LangGraph's `langgraph.config` helpers: what the running node can reach without declaring it."""

from __future__ import annotations

from typing import Any

from agent_runtime.engine import context
from agent_runtime.engine.runtime import StreamWriter, get_runtime


def get_config() -> dict[str, Any]:
    """The config of the node running here (what a `config` parameter receives)."""
    scratch = context.current()
    return scratch.config if scratch.config is not None else scratch.run.node_config(scratch.task)


def get_stream_writer() -> StreamWriter:
    """A function writing a chunk to the run's `stream_mode="custom"` stream (ignored when not streamed)."""
    return get_runtime().stream_writer


def get_store() -> Any:
    """The store given as `compile(store=...)`, or None."""
    return get_runtime().store
