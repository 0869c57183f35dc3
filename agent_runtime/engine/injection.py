"""What a node function gets besides its state, as LangGraph injects it: parameters named `config`,
`runtime`, `writer`, `store` and an error handler's `error: NodeError` (`previous` is the functional
API's), and its TimeoutPolicy.

A node that declares none of them is called as it is (the engine passes `config` itself); otherwise
it is wrapped in a `(state, config)` function that builds its keyword arguments. A task's or
entrypoint's timeout wraps its function here; a graph node's is applied by the engine
(engine/tasks.py), where a Send can replace it."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from types import UnionType
from typing import Any, Union, get_origin

from agent_runtime.core.types import TimeoutPolicy
from agent_runtime.engine.error_handlers import CONFIG_KEY_NODE_ERROR
from agent_runtime.engine.runtime import call_with_timeout, task_runtime
from agent_runtime.engine.spec import is_async_callable
from agent_runtime.engine.timeouts import sync_timeout_unsupported
from agent_runtime.errors import NodeError

INJECTED = ("runtime", "writer", "store", "error")
_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _injected(param: inspect.Parameter) -> bool:
    if param.kind not in _KINDS:
        return False
    if param.name == "error":  # an error handler's NodeError (as LangGraph: by name and annotation)
        return param.annotation in (NodeError, "NodeError")
    return param.name in ("config", *INJECTED)


def injected_parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The injectable parameters `fn` declares after its first (the state), `config` included."""
    try:
        params = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params if _injected(p))


# How a `config` parameter may be annotated (LangChain's RunnableConfig, as a type or a string).
CONFIG_ANNOTATIONS = frozenset(("RunnableConfig", "Optional[RunnableConfig]", "RunnableConfig | None"))


def annotation_name(annotation: Any) -> str:
    """How LangGraph matches an injectable parameter's annotation, without importing its types: a
    string as written, a class by name, `X | None` / `Optional[X]` as "Optional[X]"."""
    if isinstance(annotation, str):
        return annotation
    args = getattr(annotation, "__args__", None)
    if args and len(args) == 2 and type(None) in args and get_origin(annotation) in (Union, UnionType):
        inner = args[0] if args[1] is type(None) else args[1]
        return f"Optional[{annotation_name(inner)}]"
    name = getattr(annotation, "__name__", None)
    return name if isinstance(name, str) and get_origin(annotation) is None else repr(annotation)


def warn_config_annotation(fn: Callable[..., Any]) -> None:
    """LangGraph's UserWarning for a node whose `config` parameter is annotated other than
    RunnableConfig (it used to take any annotation; unannotated is fine)."""
    try:
        param = inspect.signature(fn).parameters.get("config")
    except (TypeError, ValueError):
        return
    if param is None or param.kind not in _KINDS or param.annotation is inspect.Parameter.empty:
        return
    if annotation_name(param.annotation) not in CONFIG_ANNOTATIONS:
        warnings.warn(
            "The 'config' parameter should be typed as 'RunnableConfig' or "
            f"'RunnableConfig | None', not '{param.annotation}'. ",
            UserWarning,
            stacklevel=3,
        )


def injected_arguments(names: tuple[str, ...], config: dict[str, Any]) -> dict[str, Any]:
    if names == ("config",):
        return {"config": config}
    runtime = task_runtime(config)
    values = {
        "config": config,
        "runtime": runtime,
        "writer": runtime.stream_writer,
        "store": runtime.store,
        "error": config.get("configurable", {}).get(CONFIG_KEY_NODE_ERROR),
    }
    return {name: values[name] for name in names}


def no_sync_timeout(name: str, fn: Callable[..., Any], timeout: TimeoutPolicy | None) -> None:
    """A timeout is for async functions only (sync Python cannot be cancelled): refused at declaration."""
    if timeout is not None and not is_async_callable(fn):
        raise sync_timeout_unsupported(name)


def with_timeout(name: str, fn: Callable[..., Any], timeout: TimeoutPolicy | None) -> Callable[..., Any]:
    """`fn` (a task or entrypoint function) with each call under `timeout`."""
    no_sync_timeout(name, fn, timeout)
    if timeout is None:
        return fn

    async def timed(*args: Any, **kwargs: Any) -> Any:
        return await call_with_timeout(name, timeout, lambda: fn(*args, **kwargs))

    return timed


def is_runnable(obj: Any) -> bool:
    """A LangChain Runnable (a tool, a chain, a compiled graph...): its class defines invoke and
    ainvoke (a Mock, which answers any attribute, is a plain callable)."""
    return not inspect.isroutine(obj) and hasattr(type(obj), "invoke") and hasattr(type(obj), "ainvoke")


def runnable_node(runnable: Any) -> Callable[..., Any]:
    """A Runnable as a node function: `ainvoke(state, config)` (a sync-only Runnable's ainvoke runs
    its invoke on an executor thread)."""

    async def call(state: Any, config: dict[str, Any]) -> Any:
        return await runnable.ainvoke(state, config)

    return call


def _keyword_only_config(fn: Callable[..., Any]) -> bool:
    """`config` must be passed by name (`def f(state, *, config)`, langsmith's @traceable wrapper)."""
    try:
        param = inspect.signature(fn).parameters.get("config")
    except (TypeError, ValueError):
        return False
    return param is not None and param.kind is inspect.Parameter.KEYWORD_ONLY


def node_callable(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` as the engine calls it: `fn(state)` or `fn(state, config)`."""
    if is_runnable(fn):
        fn = runnable_node(fn)
    names = injected_parameters(fn)
    if not set(names) & set(INJECTED) and not _keyword_only_config(fn):
        return fn
    if is_async_callable(fn):

        async def acall(state: Any, config: dict[str, Any]) -> Any:
            return await fn(state, **injected_arguments(names, config))

        return acall

    def call(state: Any, config: dict[str, Any]) -> Any:
        return fn(state, **injected_arguments(names, config))

    return call
