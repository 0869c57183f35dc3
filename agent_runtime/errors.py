"""Exceptions raised by the runtime (names follow LangGraph's so user code can catch the same errors)."""

from __future__ import annotations

import enum
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agent_runtime.channels.base import EmptyChannelError as EmptyChannelError  # LangGraph's errors name it
from agent_runtime.core.deprecation import LangGraphDeprecatedSinceV10
from agent_runtime.core.types import Interrupt


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


class GraphBubbleUp(Exception):
    """A run's pause rather than its failure: not retried, not given to an error handler."""


class GraphInterrupt(GraphBubbleUp):
    """Raised inside a node by `interrupt()`; the runtime catches it and pauses the run."""

    def __init__(self, interrupts: Sequence[Interrupt] = ()) -> None:
        super().__init__(interrupts)
        self.interrupts = tuple(interrupts)


class GraphDrained(GraphBubbleUp):
    """The run stopped at a superstep boundary because `RunControl.request_drain()` was called; its
    checkpoint is saved, and invoking the thread again (input None) goes on from there."""

    def __init__(self, reason: str = "shutdown") -> None:
        super().__init__(f"Graph drained: {reason}")
        self.reason = reason


class NodeInterrupt(GraphInterrupt):
    """Deprecated (LangGraph 1.0): raised by a node to pause the run with `value`; use `interrupt()`."""

    def __init__(self, value: Any, id: str | None = None) -> None:
        warnings.warn(
            "NodeInterrupt is deprecated. Please use `langgraph.types.interrupt` instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        super().__init__([Interrupt(value) if id is None else Interrupt(value, id)])


class ParentCommand(GraphBubbleUp):
    """A node returned Command(graph=Command.PARENT): it leaves this graph's run and is the result of
    the node of the parent graph that ran it (as a subgraph node or from inside its function)."""

    def __init__(self, command: Any) -> None:
        super().__init__(command)
        self.command = command


class UnknownInterruptError(Exception):
    """Strict resume mode (engine/resume.py): the resume does not match the pending interrupts. `reason`:
    "not_pending" (the map names interrupts that are not pending: `interrupt_ids`), "empty_map", or
    "ambiguous" (one value, several pending); `pending_ids` can still be answered (nothing was written)."""

    def __init__(
        self,
        message: str,
        *,
        reason: Literal["not_pending", "empty_map", "ambiguous"],
        interrupt_ids: Sequence[str] = (),
        pending_ids: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.interrupt_ids = tuple(interrupt_ids)
        self.pending_ids = tuple(pending_ids)


class GuardStopped(Exception):
    """Raised at a task call (functional API) once the guard rails decided to stop the run; the run
    ends with the guard's stop reason, as a StateGraph run stopped at a barrier does."""


class NodeTimeoutError(Exception):
    """An attempt of a node exceeded its TimeoutPolicy (`kind`: which limit fired). Not a TimeoutError
    (an OSError), so the default RetryPolicy retries it, as in LangGraph."""

    def __init__(
        self,
        node: str,
        elapsed: float,
        *,
        kind: Literal["idle", "run"],
        idle_timeout: float | None = None,
        run_timeout: float | None = None,
    ) -> None:
        timeout = idle_timeout if kind == "idle" else run_timeout
        if timeout is None:
            raise ValueError(f"{kind}_timeout is required when kind={kind!r}")
        if kind == "idle":
            message = (
                f"Node '{node}' exceeded its idle timeout of {timeout:.3f}s without making progress "
                f"(elapsed: {elapsed:.3f}s)."
            )
        else:
            message = f"Node '{node}' exceeded its run timeout of {timeout:.3f}s (elapsed: {elapsed:.3f}s)."
        super().__init__(message)
        self.node = node
        self.elapsed = elapsed
        self.kind = kind
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self.run_timeout = run_timeout


class NodeCancelledError(Exception):
    """A node's own code raised asyncio.CancelledError: a failure of the node (retried and routed as
    any other), unlike the runtime's cancellation of a task, which stays a CancelledError."""

    def __init__(self, node: str, message: str | None = None) -> None:
        super().__init__(message or f"Node {node!r} raised asyncio.CancelledError")
        self.node = node


class SavedError(Exception):
    """A node's error as a checkpoint kept it (its text): what its error handler gets on a resume."""


@dataclass(frozen=True, slots=True)
class NodeError:
    """What a node's error handler gets in a parameter annotated `NodeError`: the failed node's name
    and its error (after a resume from a checkpoint, an exception rebuilt from its saved text)."""

    node: str
    error: BaseException


_INVALID_RESUME = "_langgraph_invalid_resume"  # LangGraph's attribute name


def mark_invalid_resume(error: BaseException) -> None:
    setattr(error, _INVALID_RESUME, True)


def is_invalid_resume(error: BaseException) -> bool:
    """Whether `error` was raised because a resume value did not match interrupt()'s `response_schema`."""
    return getattr(error, _INVALID_RESUME, False) is True


class TaskNotFound(Exception):
    """A task id names no task of the checkpoint (LangGraph's distributed executor)."""


class ErrorCode(enum.Enum):
    """LangGraph's error codes (the troubleshooting page each error message links to)."""

    GRAPH_RECURSION_LIMIT = "GRAPH_RECURSION_LIMIT"
    INVALID_CONCURRENT_GRAPH_UPDATE = "INVALID_CONCURRENT_GRAPH_UPDATE"
    INVALID_GRAPH_NODE_RETURN_VALUE = "INVALID_GRAPH_NODE_RETURN_VALUE"
    MULTIPLE_SUBGRAPHS = "MULTIPLE_SUBGRAPHS"
    INVALID_CHAT_HISTORY = "INVALID_CHAT_HISTORY"
