"""Exceptions raised by the runtime (names follow LangGraph's so user code can catch the same errors)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_runtime.types import Interrupt


class InvalidUpdateError(Exception):
    """A write that a channel cannot accept (e.g. two writes to a LastValue key in one superstep)."""


class GraphRecursionError(RecursionError):
    """The run reached `recursion_limit` supersteps without hitting a stop condition."""


class EmptyInputError(Exception):
    """The graph received no input and has no checkpoint to resume from."""


class GraphCompileError(ValueError):
    """The graph definition is invalid; raised by `StateGraph.compile()`."""


class TopologyError(GraphCompileError):
    """A topology hazard found by the diagnostics, raised instead of a warning in strict mode."""


class GraphInterrupt(Exception):
    """Raised inside a node by `interrupt()`; the runtime catches it and pauses the run."""

    def __init__(self, interrupts: Sequence[Interrupt] = ()) -> None:
        super().__init__(interrupts)
        self.interrupts = tuple(interrupts)


class ParentCommand(Exception):
    """A node returned Command(graph=Command.PARENT): it leaves this graph's run and is the result of
    the node of the parent graph that ran it (as a subgraph node or from inside its function)."""

    def __init__(self, command: Any) -> None:
        super().__init__(command)
        self.command = command


class GuardStopped(Exception):
    """Raised at a task call (functional API) once the guard rails decided to stop the run; the run
    ends with the guard's stop reason, as a StateGraph run stopped at a barrier does."""
