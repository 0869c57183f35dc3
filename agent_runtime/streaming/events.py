"""LangChain's event stream (`astream_events(version="v1" | "v2")`) and run log (`astream_log`) of a
graph run: the `on_chain_*`, `on_chat_model_*`, `on_tool_*`... events of the run's callbacks
(engine/callbacks.py: the graph's chain run, its nodes', and whatever the nodes call), and the graph's
stream chunks as `on_chain_stream` of its run (the log's `streamed_output`). langchain-core builds both
over the graph's `astream`, as for any Runnable."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol


class Streamable(Protocol):
    name: str

    def astream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[Any]: ...


class _Named:
    """A graph as langchain-core's v1 event stream reads a Runnable: its name and `astream`."""

    def __init__(self, graph: Streamable) -> None:
        self.graph = graph

    def get_name(self) -> str:
        return self.graph.name

    def astream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        return self.graph.astream(input, config, **kwargs)


def astream_events(
    graph: Streamable, input: Any, config: dict[str, Any] | None = None, *, version: str = "v2", **kwargs: Any
) -> AsyncIterator[Any]:
    """The run's LangChain events in the format of `version` (`include_names=`, `exclude_tags=`...
    filter them; other `kwargs` go to `astream`). Closing it cancels the run at once (it is
    langchain-core's generator itself, not a wrapper whose closing would leave it to the garbage
    collector)."""
    from langchain_core.tracers import event_stream

    if version == "v2":
        return event_stream._astream_events_implementation_v2(graph, input, config, **kwargs)  # type: ignore[arg-type]
    if version == "v1":
        return event_stream._astream_events_implementation_v1(_Named(graph), input, config, **kwargs)  # type: ignore[arg-type]
    raise NotImplementedError(f"astream_events(version={version!r}): use 'v1' or 'v2'")


def astream_log(
    graph: Streamable, input: Any, config: dict[str, Any] | None = None, **kwargs: Any
) -> AsyncIterator[Any]:
    """The run's `RunLogPatch`es (`diff=False`: the `RunLog` so far), exactly as langchain-core's
    `Runnable.astream_log` makes them for any Runnable (its filters, its deprecation warning), over the
    graph's `astream`: it uses nothing of the Runnable but `astream`."""
    from langchain_core.runnables import Runnable

    return Runnable.astream_log(graph, input, config, **kwargs)  # type: ignore[call-overload]
