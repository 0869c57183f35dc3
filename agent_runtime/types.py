"""Public value types: Send, Command, Interrupt, RetryPolicy, TimeoutPolicy, Terminate, StopReason, StateSnapshot."""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Annotated, Any, ClassVar, Generic, Literal, NamedTuple, TypeVar, cast

from agent_runtime.deprecation import LangGraphDeprecatedSinceV10, LangGraphDeprecatedSinceV11

START = "__start__"
END = "__end__"

N = TypeVar("N")


@dataclass(frozen=True, slots=True)
class Send:
    """Run `node` in the next superstep with `arg` as its whole input (map-reduce fan-out)."""

    node: str
    arg: Any


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


OutputT = TypeVar("OutputT")
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


def default_retry_on(exc: Exception) -> bool:
    """LangGraph's default: retry everything but programming errors (ConnectionError is retried)."""
    if isinstance(exc, ConnectionError):
        return True
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
    """How a failing node is re-run inside the same superstep."""

    initial_interval: float = 0.5
    backoff_factor: float = 2.0
    max_interval: float = 128.0
    max_attempts: int = 3
    jitter: bool = True
    retry_on: type[Exception] | Sequence[type[Exception]] | Callable[[Exception], bool] = default_retry_on

    def matches(self, exc: Exception) -> bool:
        if isinstance(self.retry_on, type) and issubclass(self.retry_on, Exception):
            return isinstance(exc, self.retry_on)
        if isinstance(self.retry_on, Sequence):
            return isinstance(exc, tuple(self.retry_on))
        return bool(cast(Callable[[Exception], bool], self.retry_on)(exc))

    def delay(self, attempts: int) -> float:
        return min(self.max_interval, self.initial_interval * self.backoff_factor ** (attempts - 1))


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
        policy = value if isinstance(value, TimeoutPolicy) else cls(run_timeout=value)
        if policy.refresh_on not in ("auto", "heartbeat"):
            raise ValueError("refresh_on must be 'auto' or 'heartbeat'")
        run_timeout = _seconds(policy.run_timeout, "run_timeout")
        idle_timeout = _seconds(policy.idle_timeout, "idle_timeout")
        if run_timeout is None and idle_timeout is None:
            return None
        return cls(run_timeout=run_timeout, idle_timeout=idle_timeout, refresh_on=policy.refresh_on)


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
