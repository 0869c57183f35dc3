"""LangGraph's functional API (`langgraph.func`): `@task` and `@entrypoint`, on the superstep engine.

An entrypoint compiles to a one-node graph, as in LangGraph: the node is triggered by the input on
`__start__`, runs the function, and writes its return value to `__end__` and the value to keep for the
thread's next run to `__previous__`. Each invocation is one superstep. Task calls made by the function
run inside that superstep (agent_runtime/engine/calls.py) and their results are saved as the step's
pending writes, so the function re-run after an `interrupt()` gets them back without running them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, NamedTuple, ParamSpec, TypedDict, TypeVar, get_args, get_origin, overload

from agent_runtime.channels import EphemeralValue, LastValue, Topic
from agent_runtime.checkpoint.base import BaseCheckpointer
from agent_runtime.constants import TASKS
from agent_runtime.core.deprecation import LangGraphDeprecatedSinceV10, renamed_argument
from agent_runtime.core.schema import StateSchema
from agent_runtime.core.types import END, START, RetryPolicy, TimeoutPolicy
from agent_runtime.engine import context
from agent_runtime.engine.algo import Task
from agent_runtime.engine.calls import CallSpec, Future, call_settled, call_settled_async, start_call
from agent_runtime.engine.guard_rails import GuardRails
from agent_runtime.engine.injection import injected_arguments, injected_parameters, with_timeout
from agent_runtime.engine.loop import Run
from agent_runtime.engine.node_cache import CachePolicy, cached_call, namespace
from agent_runtime.engine.spec import GraphSpec, NodeSpec, is_async_callable
from agent_runtime.graph.node_schemas import node_name
from agent_runtime.pregel.compiled import CompiledGraph

__all__ = ("entrypoint", "task")

PREVIOUS = "__previous__"
RESULT_KEYS = frozenset({END})

P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S")

# The entrypoint's state: its last return value (on END) and the value its next run gets as `previous`.
_EntrypointState = TypedDict("_EntrypointState", {"__end__": Any, "__previous__": Any})


def _policies(retry_policy: RetryPolicy | Sequence[RetryPolicy] | None) -> tuple[RetryPolicy, ...]:
    if retry_policy is None:
        return ()
    return (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy)


class _TaskFunction(Generic[P, T]):
    """A `@task` function: calling it (inside an entrypoint or a node) starts it and returns a future."""

    def __init__(
        self,
        func: Callable[P, T],
        *,
        name: str | None,
        retry_policy: tuple[RetryPolicy, ...],
        timeout: TimeoutPolicy | None = None,
        cache_policy: CachePolicy | None = None,
    ) -> None:
        self.func = func
        name = name or node_name(func)
        call = with_timeout(name, func, timeout)
        self.cache_policy = cache_policy
        if cache_policy is not None:
            call = cached_call(name, call, cache_policy)
        self.spec = CallSpec(name, call, retry_policy, is_async_callable(func))
        functools.update_wrapper(self, func)
        self.__name__ = self.spec.name

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Future:
        return start_call(self.spec, args, kwargs)

    def clear_cache(self, cache: Any) -> None:
        """Forget this task's cached results in `cache`."""
        if self.cache_policy is not None:
            cache.clear([namespace(self.spec.name)])

    async def aclear_cache(self, cache: Any) -> None:
        if self.cache_policy is not None:
            await cache.aclear([namespace(self.spec.name)])


@overload
def task(
    __func_or_none__: None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    timeout: float | timedelta | TimeoutPolicy | None = None,
) -> Callable[[Callable[P, T]], _TaskFunction[P, T]]: ...


@overload
def task(__func_or_none__: Callable[P, T]) -> _TaskFunction[P, T]: ...


def task(
    __func_or_none__: Callable[P, T] | None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    timeout: float | timedelta | TimeoutPolicy | None = None,
    cache_policy: CachePolicy | None = None,
    **deprecated: Any,
) -> Callable[[Callable[P, T]], _TaskFunction[P, T]] | _TaskFunction[P, T]:
    """Make a function a task: `@task` or `@task(name=..., retry_policy=..., timeout=...)`, sync or
    async (a timeout: async only)."""
    policy = TimeoutPolicy.coerce(timeout)
    retry_policy = renamed_argument(deprecated, "retry", "retry_policy", retry_policy)

    def decorator(func: Callable[P, T]) -> _TaskFunction[P, T]:
        return _TaskFunction(
            func, name=name, retry_policy=_policies(retry_policy), timeout=policy, cache_policy=cache_policy
        )

    return decorator(__func_or_none__) if __func_or_none__ is not None else decorator


class EntryInput(NamedTuple):
    """What the entrypoint node gets: the run's input and the thread's `previous` value."""

    value: Any
    previous: Any


class EntrypointRun(Run):
    """A run of an entrypoint: any value is the input, and the output is the return value."""

    live_modes = frozenset({"custom", "updates"})  # a task call's update goes out when the call returns

    def input_writes(self, value: Any) -> list[tuple[str, Any]]:
        return [(START, value)]

    def task_input(self, task: Task) -> Any:
        channels = self.state.channels
        previous = channels[PREVIOUS]
        return EntryInput(channels[START].get(), previous.get() if previous.is_available() else None)

    @property
    def result_keys(self) -> frozenset[str]:
        return RESULT_KEYS  # the return value, not `previous`

    def shown_input(self, task_input: Any) -> Any:
        return task_input.value if isinstance(task_input, EntryInput) else task_input  # not `previous`

    def output(self) -> Any:
        returned = self.state.channels[END]
        return returned.get() if returned.is_available() else None

    def task_update(self, task: Task, keys: frozenset[str]) -> Any:
        return next((v for c, v in task.writes if c == END), None)


class Entrypoint(CompiledGraph):
    """The runnable an `@entrypoint` function becomes: invoke / stream / get_state like a graph."""

    run_class = EntrypointRun

    def io_channels(self) -> tuple[str, str]:
        return START, END


def _io_types(func: Callable[..., Any]) -> tuple[Any, Any]:
    """The entrypoint's (input, output) types: its first parameter's and its return annotation's (the
    value of an `entrypoint.final[value, save]`); Any where not annotated."""
    signature = inspect.signature(func)
    first = next(iter(signature.parameters.values()))
    input_type = Any if first.annotation is inspect.Parameter.empty else first.annotation
    returns = signature.return_annotation
    if returns is inspect.Signature.empty or returns is entrypoint.final:
        return input_type, Any
    if get_origin(returns) is entrypoint.final:
        return input_type, get_args(returns)[0]
    return input_type, returns


class entrypoint:  # lowercase: LangGraph's name
    """Turn a function into a workflow: `@entrypoint(checkpointer=...)`.

    The function takes the input as its first parameter, and may declare `previous` (its last return
    value on the thread, or the `save` of an `entrypoint.final`) and `config`. `guard_rails=` (our
    extension) counts each task call as a step: limits and loop detection stop a looping workflow at
    its next task call, with the guard's stop reason in `last_run_report`.
    """

    def __init__(
        self,
        checkpointer: BaseCheckpointer | None = None,
        store: Any = None,
        context_schema: type[Any] | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        *,
        guard_rails: GuardRails | None = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
        cache: Any = None,
        **deprecated: Any,
    ) -> None:
        self.checkpointer = checkpointer
        self.cache = cache
        self.store = store
        self.context_schema = renamed_argument(
            deprecated, "config_schema", "context_schema", context_schema, LangGraphDeprecatedSinceV10
        )
        self.retry_policy = _policies(renamed_argument(deprecated, "retry", "retry_policy", retry_policy))
        self.guard_rails = guard_rails
        self.timeout = TimeoutPolicy.coerce(timeout)

    @dataclass(frozen=True, slots=True)
    class final(Generic[R, S]):  # lowercase: LangGraph's name
        """Return `value` to the caller and keep `save` as the thread's next `previous`."""

        value: R
        save: S

    def __call__(self, func: Callable[..., Any]) -> Entrypoint:
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError("Generators are not supported in the Functional API.")
        if not inspect.signature(func).parameters:
            raise ValueError("Entrypoint function must have at least one parameter")
        name = func.__name__
        node = NodeSpec(
            name=name,
            fn=_node_function(func, self.timeout),
            triggers=(START,),
            retry=self.retry_policy,
            is_async=is_async_callable(func),
            takes_config=True,
            writer=_entry_writes,
        )
        schema = StateSchema(_EntrypointState)
        input_type, output_type = _io_types(func)
        channels = {
            **{k: ch.new() for k, ch in schema.channels.items()},
            END: LastValue(output_type, END),
            START: EphemeralValue(input_type, key=START),
            TASKS: Topic(key=TASKS),
        }
        spec = GraphSpec(
            schema=schema,
            channels=channels,
            nodes={name: node},
            trigger_to_nodes={START: (name,)},
            finishable=(),
            step_sensitive=tuple(c for c, ch in channels.items() if ch.STEP_SENSITIVE),
        )
        compiled = Entrypoint(
            spec,
            checkpointer=self.checkpointer,
            interrupt_before=(),
            interrupt_after=(),
            name="LangGraph",
            guard_rails=self.guard_rails,
        )
        compiled.store = self.store
        compiled.cache = self.cache
        compiled.context_schema = self.context_schema
        return compiled


def _entry_writes(result: Any) -> list[tuple[str, Any]]:
    """The entrypoint node's writes: what the caller gets, and what the next run gets as `previous`."""
    if isinstance(result, entrypoint.final):
        return [(END, result.value), (PREVIOUS, result.save)]
    return [(END, result), (PREVIOUS, result)]


def _node_function(func: Callable[..., Any], timeout: TimeoutPolicy | None) -> Callable[..., Any]:
    """The node calling `func`: the input first, then the injected parameters it declares (`previous`,
    `config`, `runtime`, `writer`, `store`). The node waits for the task calls `func` did not wait for,
    as they belong to its superstep."""
    has_previous = "previous" in inspect.signature(func).parameters
    names = injected_parameters(func)
    timed = with_timeout(func.__name__, func, timeout)

    def arguments(arg: EntryInput, config: dict[str, Any]) -> dict[str, Any]:
        injected = injected_arguments(names, config) if names else {}
        if has_previous:
            injected["previous"] = arg.previous
        return injected

    if is_async_callable(func):

        async def run_async(arg: EntryInput, config: dict[str, Any]) -> Any:
            return await call_settled_async(context.current(), timed, arg.value, **arguments(arg, config))

        return run_async

    def run(arg: EntryInput, config: dict[str, Any]) -> Any:
        return call_settled(context.current(), func, arg.value, **arguments(arg, config))

    return run
