"""`Runtime` (LangGraph's `langgraph.runtime`): the run-scoped context, store and stream writer a node
receives as its `runtime` parameter or from `get_runtime()`.

A run's Runtime travels in its config (`configurable["__pregel_runtime"]`, LangGraph's key), so a
subgraph, which gets the parent's configurable, shares the parent's context and store. Its stream
writer is the run's own: `stream_mode="custom"` shows the chunks of the graph's own nodes, and a
subgraph's only with `subgraphs=True` (as LangGraph).
"""

from __future__ import annotations

import dataclasses
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from agent_runtime.core.protocol import CONFIG_KEY_RUNTIME
from agent_runtime.core.types import TimeoutPolicy
from agent_runtime.engine import context as task_context
from agent_runtime.engine.algo import task_namespace
from agent_runtime.engine.attempt_events import finish_attempt, observer_of, progress_reporter, start_attempt
from agent_runtime.engine.control import RunControl
from agent_runtime.engine.timeouts import new_scope, progress, run_timed

if TYPE_CHECKING:
    from agent_runtime.engine.run_view import RunView

ContextT = TypeVar("ContextT")

StreamWriter = Callable[[Any], None]


def _no_op_stream_writer(chunk: Any) -> None:
    return None


def heartbeat() -> None:
    """Progress for the current node attempt's `TimeoutPolicy(idle_timeout=...)` (a no-op without one)."""
    progress("heartbeat")


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Read-only facts about the current node run."""

    checkpoint_id: str
    checkpoint_ns: str
    task_id: str
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None

    def patch(self, **overrides: Any) -> ExecutionInfo:
        return replace(self, **overrides)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Set from `configurable["assistant_id"]` / `["graph_id"]` / `["langgraph_auth_user"]` (LangGraph
    Server's keys), else None."""

    assistant_id: str
    graph_id: str
    user: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Runtime(Generic[ContextT]):
    """Run-scoped dependencies of a node: `context` (given as `invoke(..., context=...)`), `store`
    (`compile(store=...)`), `stream_writer` (`stream_mode="custom"`), `heartbeat`, `execution_info`,
    `control` (the run's RunControl; a subgraph shares its parent's)."""

    context: ContextT = field(default=None)  # type: ignore[assignment]
    store: Any = None
    stream_writer: StreamWriter = _no_op_stream_writer
    heartbeat: Callable[[], None] = heartbeat
    previous: Any = None
    execution_info: ExecutionInfo | None = None
    server_info: ServerInfo | None = None
    control: RunControl | None = None

    @property
    def drain_requested(self) -> bool:
        return self.control is not None and self.control.drain_requested

    @property
    def drain_reason(self) -> str | None:
        return self.control.drain_reason if self.control is not None else None

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """`other`'s values where it has them, this runtime's elsewhere."""
        return Runtime(
            context=other.context or self.context,
            store=other.store or self.store,
            stream_writer=self.stream_writer if other.stream_writer is _no_op_stream_writer else other.stream_writer,
            heartbeat=self.heartbeat if other.heartbeat is heartbeat else other.heartbeat,
            previous=self.previous if other.previous is None else other.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        return replace(self, **overrides)

    def patch_execution_info(self, **overrides: Any) -> Runtime[ContextT]:
        if self.execution_info is None:
            raise RuntimeError("Cannot patch execution_info before it has been set")
        return replace(self, execution_info=self.execution_info.patch(**overrides))


DEFAULT_RUNTIME: Runtime[Any] = Runtime()


def _as_runtime(value: Any) -> Runtime[Any] | None:
    """The Runtime in a config slot; another runtime-like object there (LangGraph Server puts its own)
    gives its `context` and `store`."""
    if value is None or isinstance(value, Runtime):
        return value
    return Runtime(context=getattr(value, "context", None), store=getattr(value, "store", None))


def coerce_context(schema: type[Any] | None, value: Any) -> Any:
    """A dict context becomes the graph's `context_schema` (a dataclass or pydantic model), as in LangGraph."""
    if schema is None or not isinstance(value, Mapping):
        return value
    if dataclasses.is_dataclass(schema):
        return schema(**value)
    validate = getattr(schema, "model_validate", None)
    return validate(value) if validate is not None else value


def with_runtime(
    config: dict[str, Any] | None, runtime_context: Any, store: Any, control: RunControl | None = None
) -> dict[str, Any] | None:
    """The config of a new run: its Runtime (from `context=`, the caller's, or a new one) in configurable.
    Called inside a node without a Runtime in `config`, the run inherits the node's (as LangGraph's
    config propagation makes a graph invoked from a node share the node's context, and its control)."""
    configurable = dict((config or {}).get("configurable", {}))
    runtime = _as_runtime(configurable.get(CONFIG_KEY_RUNTIME))
    if runtime is None:
        caller = task_context.running()
        runtime = _as_runtime(caller.run.config.get("configurable", {}).get(CONFIG_KEY_RUNTIME)) if caller else None
    if runtime_context is None and store is None and runtime is None and control is None:
        return config
    runtime = runtime or DEFAULT_RUNTIME
    if control is not None:
        runtime = runtime.override(control=control)
    if runtime_context is not None:
        runtime = runtime.override(context=runtime_context)
    if store is not None and runtime.store is None:
        runtime = runtime.override(store=store)
    configurable[CONFIG_KEY_RUNTIME] = runtime
    return {**(config or {}), "configurable": configurable}


def bind_runtime(run: RunView) -> None:
    """Give the run a Runtime whose stream writer feeds its `"custom"` stream, and a RunControl (the
    caller's, or a new one). A subgraph's run has its own writer (its chunks reach the parent's stream
    only with `subgraphs=True`, as LangGraph's) and its parent's control."""
    configurable = dict(run.config.get("configurable", {}))
    runtime = _as_runtime(configurable.get(CONFIG_KEY_RUNTIME)) or DEFAULT_RUNTIME
    run.control = runtime.control or RunControl()

    def write(chunk: Any) -> None:
        progress("auto")
        if "custom" in run.modes:  # from any thread; wakes the step, so the chunk goes out now
            run.forward((run.stream_ns, "custom", chunk))

    configurable[CONFIG_KEY_RUNTIME] = runtime.override(stream_writer=write, control=run.control)
    run.config = {**run.config, "configurable": configurable}


class _Attempts:
    """Attempts of one task so far (a retry runs the task again with a new TaskScratch)."""

    __slots__ = ("count", "first_time", "scratch")

    def __init__(self) -> None:
        self.scratch: object = None
        self.count = 0
        self.first_time = time.time()


_ATTEMPTS: weakref.WeakKeyDictionary[RunView, dict[str, _Attempts]] = weakref.WeakKeyDictionary()


def _attempt(scratch: task_context.TaskScratch) -> _Attempts:
    attempts = _ATTEMPTS.setdefault(scratch.run, {}).setdefault(scratch.task.id, _Attempts())
    if attempts.scratch is not scratch:
        attempts.scratch = scratch
        attempts.count += 1
    return attempts


def task_runtime(config: Mapping[str, Any]) -> Runtime[Any]:
    """The Runtime of the running node: the run's, with this task's `execution_info` and `server_info`."""
    configurable = config.get("configurable", {})
    runtime = _as_runtime(configurable.get(CONFIG_KEY_RUNTIME)) or DEFAULT_RUNTIME
    scratch = task_context.running()
    if scratch is None:
        return runtime
    task = scratch.task
    attempt = _attempt(scratch)
    info = ExecutionInfo(
        checkpoint_id=scratch.run.checkpoint_id,
        checkpoint_ns=task_namespace(configurable, task),
        task_id=task.id,
        thread_id=configurable.get("thread_id"),
        run_id=config.get("run_id"),
        node_attempt=attempt.count,
        node_first_attempt_time=attempt.first_time,
    )
    return runtime.override(execution_info=info, server_info=server_info(configurable))


def server_info(configurable: Mapping[str, Any]) -> ServerInfo | None:
    """What LangGraph Server put in the config: the assistant and graph ids, and the authenticated
    user (`langgraph_auth_user`: anything with an `identity`, as the server's user proxies)."""
    assistant_id = configurable.get("assistant_id")
    graph_id = configurable.get("graph_id")
    user = configurable.get("langgraph_auth_user")
    if user is not None and not hasattr(user, "identity"):
        user = None
    if assistant_id is None and graph_id is None and user is None:
        return None
    return ServerInfo(str(assistant_id) if assistant_id else "", str(graph_id) if graph_id else "", user)


def get_runtime(context_schema: type[ContextT] | None = None) -> Runtime[ContextT]:
    """The Runtime of the node running here (`context_schema` only types the result)."""
    scratch = task_context.current()
    return cast(Runtime[ContextT], task_runtime(scratch.run.node_config(scratch.task)))


async def call_with_timeout(
    node: str, policy: TimeoutPolicy, start: Callable[[], Awaitable[Any]], config: dict[str, Any] | None = None
) -> Any:
    """One attempt of a node of the engine under `policy`, reported to the config's attempt observer."""
    observer = observer_of(config) if config is not None else None
    if observer is None:
        return await run_timed(node, policy, new_scope(policy), start)
    assert config is not None  # the observer came from it
    info = task_runtime(config).execution_info
    context = start_attempt(observer, info.task_id if info else "", node, info, policy)
    try:
        result = await run_timed(node, policy, new_scope(policy, progress_reporter(observer, context)), start)
    except BaseException as exc:
        finish_attempt(observer, context, exc)
        raise
    finish_attempt(observer, context)
    return result
