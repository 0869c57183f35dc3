"""Public value types: Send, Command, Interrupt, RetryPolicy, TimeoutPolicy, Terminate, StopReason, StateSnapshot,
GraphOutput."""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Annotated, Any, ClassVar, Generic, Literal, NamedTuple, TypeVar

from agent_runtime.core.deprecation import LangGraphDeprecatedSinceV10, LangGraphDeprecatedSinceV11

START = "__start__"
END = "__end__"

N = TypeVar("N")
OutputT = TypeVar("OutputT")


@dataclass(frozen=True, slots=True)
class Send:
    """Run `node` in the next superstep with `arg` as its whole input (map-reduce fan-out); `timeout`
    (seconds, a timedelta or a TimeoutPolicy) replaces the node's own for this task."""

    node: str
    arg: Any
    timeout: TimeoutPolicy | None = None

    def __init__(self, node: str, arg: Any, timeout: float | timedelta | TimeoutPolicy | None = None) -> None:
        object.__setattr__(self, "node", node)
        object.__setattr__(self, "arg", arg)
        object.__setattr__(self, "timeout", TimeoutPolicy.coerce(timeout))

    def __setstate__(self, state: Sequence[Any]) -> None:
        """Unpickling; a Send a checkpoint saved before `timeout` existed has two values."""
        node, arg, *rest = state
        object.__setattr__(self, "node", node)
        object.__setattr__(self, "arg", arg)
        object.__setattr__(self, "timeout", rest[0] if rest else None)

    def __repr__(self) -> str:
        """LangGraph's: the timeout only when there is one."""
        if self.timeout is None:
            return f"Send(node={self.node!r}, arg={self.arg!r})"
        return f"Send(node={self.node!r}, arg={self.arg!r}, timeout={self.timeout!r})"


@dataclass(frozen=True, slots=True)
class Command(Generic[N]):
    """Returned by a node (update + routing) or passed to invoke (resume an interrupt)."""

    update: Any = None
    goto: str | Send | Sequence[str | Send] = ()
    resume: Any = None
    graph: str | None = None

    PARENT: ClassVar[str] = "__parent__"

    def __repr__(self) -> str:
        """Only the fields given (LangGraph's repr, which tests and logs compare)."""
        given = ((name, getattr(self, name)) for name in ("update", "goto", "resume", "graph"))
        return f"Command({', '.join(f'{name}={value!r}' for name, value in given if value)})"

    def goto_targets(self) -> list[str | Send]:
        if isinstance(self.goto, str | Send):
            return [self.goto]
        return list(self.goto)


@dataclass(frozen=True, slots=True)
class Overwrite:
    """Write `value` to a reducer channel as is, bypassing the reducer for this superstep. `type` (as
    LangGraph's) keeps it recognisable once JSON has turned it into a dict."""

    value: Any
    type: Literal["__overwrite__"] = "__overwrite__"


@dataclass(frozen=True, slots=True)
class Interrupt:
    """A pause requested by `interrupt(value)`; `id` is stable across resumes of the same task;
    `response_schema` the JSON schema of the expected resume value, if interrupt() was given one."""

    value: Any
    id: str = "placeholder-id"  # LangGraph's, for an Interrupt built by hand (NodeInterrupt)
    response_schema: Any = field(default=None, kw_only=True)

    @property
    def interrupt_id(self) -> str:
        warnings.warn("`interrupt_id` is deprecated. Use `id` instead.", LangGraphDeprecatedSinceV10, stacklevel=2)
        return self.id


_GRAPH_OUTPUT_ACCESS = "Use `result.value` to access the output value directly, or `result.interrupts` for interrupts."


@dataclass(frozen=True, slots=True)
class GraphOutput(Generic[OutputT]):
    """What `invoke(..., version="v2")` returns: the output and the interrupts the run paused on.
    Reading it as the old dict (`result[key]`, `key in result`) still works, with LangGraph's warning."""

    value: OutputT
    interrupts: tuple[Interrupt, ...] = ()

    def __getitem__(self, key: str) -> Any:
        warnings.warn(
            f"Accessing GraphOutput via `result[key]` is deprecated. {_GRAPH_OUTPUT_ACCESS}",
            LangGraphDeprecatedSinceV11,
            stacklevel=2,
        )
        if key == "__interrupt__":
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        warnings.warn(
            f"Accessing GraphOutput via `key in result` is deprecated. {_GRAPH_OUTPUT_ACCESS}",
            LangGraphDeprecatedSinceV11,
            stacklevel=2,
        )
        if key == "__interrupt__":
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


def _http_status_error(exc: Exception) -> bool:
    """An httpx / requests error about an HTTP response (recognised without importing either)."""
    return type(exc).__name__ in ("HTTPStatusError", "HTTPError") and type(exc).__module__.startswith(
        ("httpx", "requests")
    )


def default_retry_on(exc: Exception) -> bool:
    """LangGraph's default: retry everything but programming errors (ConnectionError is retried), and
    an HTTP error (httpx, requests) on a 5xx response or none."""
    if isinstance(exc, ConnectionError):
        return True
    if _http_status_error(exc):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        return status is None or 500 <= status < 600
    return not isinstance(
        exc,
        ValueError
        | TypeError
        | ArithmeticError
        | ImportError
        | LookupError
        | NameError
        | SyntaxError
        | RuntimeError
        | ReferenceError
        | StopIteration
        | StopAsyncIteration
        | OSError,
    )


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a failing node is re-run inside the same superstep (see agent_runtime/engine/retries.py)."""

    initial_interval: float = 0.5
    backoff_factor: float = 2.0
    max_interval: float = 128.0
    max_attempts: int = 3
    jitter: bool = True
    retry_on: type[Exception] | Sequence[type[Exception]] | Callable[[Exception], bool] = default_retry_on


def _seconds(value: float | timedelta | None, field: str) -> float | None:
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise ValueError(f"{field} must be greater than 0")
    return seconds


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeoutPolicy:
    """Time limits of one attempt of an async node: `run_timeout` (wall clock) and `idle_timeout`
    (time without progress: a stream write or `runtime.heartbeat()`; with refresh_on="heartbeat" only
    the latter). A timed-out attempt fails with NodeTimeoutError, which the node's RetryPolicy sees."""

    run_timeout: float | timedelta | None = None
    idle_timeout: float | timedelta | None = None
    refresh_on: Literal["auto", "heartbeat"] = "auto"

    @classmethod
    def coerce(cls, value: float | timedelta | TimeoutPolicy | None) -> TimeoutPolicy | None:
        """A policy in seconds (a number or timedelta is a `run_timeout`); None when there is no limit."""
        if value is None:
            return None
        if isinstance(value, TimeoutPolicy) and value._is_coerced():
            return value  # frozen: safe to share
        policy = value if isinstance(value, TimeoutPolicy) else cls(run_timeout=value)
        if policy.refresh_on not in ("auto", "heartbeat"):
            raise ValueError("refresh_on must be 'auto' or 'heartbeat'")
        run_timeout = _seconds(policy.run_timeout, "run_timeout")
        idle_timeout = _seconds(policy.idle_timeout, "idle_timeout")
        if run_timeout is None and idle_timeout is None:
            return None
        return cls(run_timeout=run_timeout, idle_timeout=idle_timeout, refresh_on=policy.refresh_on)

    def _is_coerced(self) -> bool:
        """Already what `coerce` makes: positive float seconds, at least one limit, a known refresh_on."""
        run, idle = self.run_timeout, self.idle_timeout
        return (
            self.refresh_on in ("auto", "heartbeat")
            and (run is None or (type(run) is float and run > 0))
            and (idle is None or (type(idle) is float and idle > 0))
            and (run is not None or idle is not None)
        )


class RemainingStepsManager:
    """Marker for a managed value: the number of supersteps left before the recursion limit."""


class IsLastStepManager:
    """Marker for a managed value: True in the last superstep allowed by the recursion limit."""


RemainingSteps = Annotated[int, RemainingStepsManager]
IsLastStep = Annotated[bool, IsLastStepManager]


class StopReason(enum.StrEnum):
    """Why a run ended; set on every run's report."""

    GOAL = "GOAL"
    MAX_STEPS = "MAX_STEPS"
    TIMEOUT = "TIMEOUT"
    BUDGET = "BUDGET"
    LOOP = "LOOP"
    ERROR = "ERROR"
    ABORTED = "ABORTED"
    INTERRUPTED = "INTERRUPTED"
    DRAINED = "DRAINED"  # RunControl.request_drain(): stopped at a superstep boundary, resumable


@dataclass(frozen=True, slots=True)
class Terminate:
    """Returned by a node (alone or with an update) to end the run after this superstep."""

    status: StopReason = StopReason.GOAL
    update: Any = None
    message: str = ""


class StateSnapshot(NamedTuple):
    """What `get_state` returns: values with finished pending writes applied, and what runs next (a
    named tuple, as LangGraph's: `snapshot._replace(...)`, unpacking)."""

    values: dict[str, Any]
    next: tuple[str, ...]
    config: dict[str, Any]
    metadata: dict[str, Any]
    created_at: str
    parent_config: dict[str, Any] | None
    tasks: tuple[PregelTask, ...] = ()
    interrupts: tuple[Interrupt, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TracePolicy:
    """What the tracers record of a node's own run (`add_node(..., trace_policy=)`): its input and its
    output as `process_inputs(value)` / `process_outputs(value)` return them (to omit or summarize large
    payloads). Only tracers see them: the node, its graph, the stream handlers and other callbacks get
    the real values. A processor that raises is logged and the real value recorded. Not a redaction
    tool: the runs of what the node calls (a chat model) record what they record."""

    process_inputs: Callable[[Any], Any] | None = None
    process_outputs: Callable[[Any], Any] | None = None


def omit_payload(_value: Any) -> dict[str, Any]:
    """A `TracePolicy` processor recording an empty payload (the run and its timing stay)."""
    return {}


class PregelTask(NamedTuple):
    """A task of a superstep as `get_state` shows it (LangGraph's fields, in its order)."""

    id: str
    name: str
    path: tuple[Any, ...]  # ("__pregel_pull", node) or ("__pregel_push", Send index)
    error: str | None = None
    interrupts: tuple[Interrupt, ...] = ()
    # a compiled-graph node's subgraph: the config of its checkpoints, or its state (`subgraphs=True`)
    state: dict[str, Any] | StateSnapshot | None = None
    result: Any = None  # the saved writes of a task that already finished


class StateUpdate(NamedTuple):
    """One update of `bulk_update_state`: `values` written as if node `as_node` had returned them."""

    values: dict[str, Any] | None
    as_node: str | None = None
    task_id: str | None = None


# LangGraph's type aliases (typing only: the values the runtime accepts)
All = Literal["*"]
Durability = Literal["sync", "async", "exit"]
StreamMode = Literal["values", "updates", "debug", "custom", "checkpoints", "tasks", "messages", "tools"]
