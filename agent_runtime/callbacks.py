"""Graph lifecycle callbacks (LangGraph's `langgraph.callbacks`): a `GraphCallbackHandler` given in
`config["callbacks"]` (alone, in a list or in a callback manager) is told when the graph pauses on
interrupts (`on_interrupt`) and when a run resumes a thread from its checkpoint (`on_resume`). Only the
graph invoked reports them, not its subgraphs. A handler that raises is logged and skipped, unless it sets
`raise_error = True` (LangChain's rule); its methods may be sync or async.

Needs langchain-core (LangGraph's own dependency)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.callbacks.manager import ahandle_event, handle_event

from agent_runtime.core.types import Interrupt

GraphLifecycleStatus: TypeAlias = Literal[
    "input", "pending", "done", "interrupt_before", "interrupt_after", "out_of_steps"
]


@dataclass(frozen=True)
class GraphInterruptEvent:
    """The graph paused on interrupts (none for a static breakpoint)."""

    run_id: UUID | None  # the graph's chain run
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]
    interrupts: tuple[Interrupt, ...]


@dataclass(frozen=True)
class GraphResumeEvent:
    """A run resumed the thread from its checkpoint."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]


GraphLifecycleEvent: TypeAlias = GraphInterruptEvent | GraphResumeEvent


class GraphCallbackHandler(BaseCallbackHandler):
    """Subclass it to observe a graph's interrupts and resumes (other LangChain callbacks as usual)."""

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """The graph paused on interrupts."""

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """A run resumed the graph from its checkpoint."""


def graph_handlers(handlers: Sequence[BaseCallbackHandler]) -> list[BaseCallbackHandler]:
    """The `GraphCallbackHandler`s among `handlers`."""
    return [h for h in handlers if isinstance(h, GraphCallbackHandler)]


class GraphCallbackManager(BaseCallbackManager):
    """Dispatches lifecycle events to the `GraphCallbackHandler`s among its handlers (any other handler
    may be added, e.g. by instrumentation libraries, and is not called)."""

    def __init__(
        self,
        handlers: Sequence[BaseCallbackHandler] | None = None,
        inheritable_handlers: Sequence[BaseCallbackHandler] | None = None,
        parent_run_id: UUID | None = None,
        *,
        run_id: UUID | None = None,
        **options: Any,
    ) -> None:
        super().__init__(list(handlers or ()), list(inheritable_handlers or ()), parent_run_id, **options)
        self.run_id = run_id

    @classmethod
    def configure(cls, callbacks: Any = None, *, run_id: UUID | None = None) -> GraphCallbackManager:
        """The graph handlers of a `callbacks` value (a handler, a list, a manager, or None)."""
        if callbacks is None:
            return cls(run_id=run_id)
        if isinstance(callbacks, BaseCallbackManager):
            return cls(
                graph_handlers(callbacks.handlers),
                graph_handlers(callbacks.inheritable_handlers),
                callbacks.parent_run_id,
                run_id=run_id,
            )
        if isinstance(callbacks, GraphCallbackHandler):
            return cls([callbacks], run_id=run_id)
        if isinstance(callbacks, str | bytes) or not isinstance(callbacks, Sequence):
            raise TypeError("callbacks must be a handler, sequence, or manager")
        return cls(graph_handlers(list(callbacks)), run_id=run_id)

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        handle_event(graph_handlers(self.handlers), "on_interrupt", None, event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        handle_event(graph_handlers(self.handlers), "on_resume", None, event)

    async def aon_interrupt(self, event: GraphInterruptEvent) -> None:
        await ahandle_event(graph_handlers(self.handlers), "on_interrupt", None, event)

    async def aon_resume(self, event: GraphResumeEvent) -> None:
        await ahandle_event(graph_handlers(self.handlers), "on_resume", None, event)


def get_graph_callback_manager_for_config(
    config: dict[str, Any], *, run_id: UUID | None = None
) -> GraphCallbackManager:
    """The lifecycle dispatcher of a run's config."""
    return GraphCallbackManager.configure(config.get("callbacks"), run_id=run_id)


__all__ = [
    "GraphCallbackHandler",
    "GraphCallbackManager",
    "GraphInterruptEvent",
    "GraphLifecycleEvent",
    "GraphLifecycleStatus",
    "GraphResumeEvent",
    "get_graph_callback_manager_for_config",
]
