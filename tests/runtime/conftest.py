"""Helpers for the runtime tests: the two libraries behind one namespace, and a superstep trace."""

from __future__ import annotations

import types
from typing import Any

import agent_runtime as ar


def _langgraph() -> types.SimpleNamespace:
    import langgraph.errors as lg_errors
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.managed import RemainingSteps
    from langgraph.types import Command, RetryPolicy, Send, interrupt

    return types.SimpleNamespace(
        name="langgraph",
        StateGraph=StateGraph,
        START=START,
        END=END,
        Send=Send,
        Command=Command,
        interrupt=interrupt,
        RetryPolicy=RetryPolicy,
        RemainingSteps=RemainingSteps,
        MemorySaver=InMemorySaver,
        InvalidUpdateError=lg_errors.InvalidUpdateError,
        GraphRecursionError=lg_errors.GraphRecursionError,
    )


def _ours() -> types.SimpleNamespace:
    return types.SimpleNamespace(
        name="agent_runtime",
        StateGraph=ar.StateGraph,
        START=ar.START,
        END=ar.END,
        Send=ar.Send,
        Command=ar.Command,
        interrupt=ar.interrupt,
        RetryPolicy=ar.RetryPolicy,
        RemainingSteps=ar.RemainingSteps,
        MemorySaver=ar.InMemoryCheckpointer,
        InvalidUpdateError=ar.InvalidUpdateError,
        GraphRecursionError=ar.GraphRecursionError,
    )


LIBS = {"langgraph": _langgraph, "agent_runtime": _ours}


def trace(app: Any, input: Any, config: dict[str, Any] | None = None) -> tuple[list[tuple[int, tuple[str, ...]]], Any]:
    """(per superstep: the sorted node names that ran, final state or the exception class name)."""
    steps: dict[int, list[str]] = {}
    final: Any = None
    try:
        for mode, event in app.stream(input, config, stream_mode=["debug", "values"]):
            if mode == "values":
                final = {k: v for k, v in event.items() if k != "__interrupt__"}
            elif event["type"] == "task":
                steps.setdefault(event["step"], []).append(event["payload"]["name"])
    except Exception as exc:
        final = type(exc).__name__
    return sorted((k, tuple(sorted(v))) for k, v in steps.items()), final
