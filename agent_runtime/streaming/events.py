"""LangChain's event stream (`astream_events(version="v2")`) of a graph run: the `on_chain_*`,
`on_chat_model_*`, `on_tool_*`... events of the run's callbacks (engine/callbacks.py: the graph's chain
run, its nodes', and whatever the nodes call), and the graph's stream chunks as `on_chain_stream` of its
run. langchain-core builds it over the graph's `astream`, as for any Runnable."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol


class Streamable(Protocol):
    def astream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[Any]: ...


def astream_events_v2(
    graph: Streamable, input: Any, config: dict[str, Any] | None = None, **kwargs: Any
) -> AsyncIterator[Any]:
    """The run's LangChain events, v2 format (`include_names=`, `exclude_tags=`... filter them; other
    `kwargs` go to `astream`). Closing it cancels the run at once (it is langchain-core's generator
    itself, not a wrapper whose closing would leave it to the garbage collector)."""
    from langchain_core.tracers.event_stream import _astream_events_implementation_v2

    return _astream_events_implementation_v2(graph, input, config, **kwargs)  # type: ignore[arg-type]
