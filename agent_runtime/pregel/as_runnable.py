"""A compiled graph as a LangChain Runnable, for composing it (`graph | runnable`, `runnable | graph`) as
LangGraph's graphs compose: the sequence's invoke / stream run the graph's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

from langchain_core.runnables import Runnable, RunnableConfig


class RunnableGraph(Protocol):
    """What a sequence runs of a compiled graph."""

    def get_name(self, suffix: str | None = None) -> str: ...

    def invoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any: ...

    async def ainvoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any: ...

    def stream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Iterator[Any]: ...

    def astream(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[Any]: ...


class GraphRunnable(Runnable[Any, Any]):
    def __init__(self, graph: RunnableGraph) -> None:
        self.graph = graph
        self.name = graph.get_name()

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self.graph.invoke(input, dict(config) if config else None, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self.graph.ainvoke(input, dict(config) if config else None, **kwargs)

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        yield from self.graph.stream(input, dict(config) if config else None, **kwargs)

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        async for chunk in self.graph.astream(input, dict(config) if config else None, **kwargs):
            yield chunk


def pipe(first: Any, second: Any) -> Runnable[Any, Any]:
    """`first | second` where either is a compiled graph (already a GraphRunnable)."""
    from langchain_core.runnables.base import RunnableSequence, coerce_to_runnable

    return RunnableSequence(coerce_to_runnable(first), coerce_to_runnable(second))
