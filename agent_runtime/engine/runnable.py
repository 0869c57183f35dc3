"""RunnableCallable: a function (sync, async, or both) as a LangChain Runnable, given the parameters it
declares from the run as LangGraph injects them (`config`, `writer`, `store`, `previous`, `runtime`).
LangGraph's prebuilt components (ToolNode...) are built on it. Needs langchain-core."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.runnables import Runnable
from langchain_core.runnables.config import set_config_context

from agent_runtime.core.run_config import (
    CONF,
    async_callback_manager_for_config,
    callback_manager_for_config,
    ensure_config,
)
from agent_runtime.engine.injection import CONFIG_ANNOTATIONS, annotation_name, warn_config_annotation
from agent_runtime.engine.runtime import CONFIG_KEY_RUNTIME

_REQUIRED: Any = inspect.Parameter.empty
_ANY = None  # any annotation


def _no_op_writer(chunk: Any) -> None:
    return None


# Injectable parameter -> (annotations it is injected under (as annotation_name spells them; _ANY: any),
# the Runtime attribute it comes from, its value when the run has none). A name appears twice when its
# default depends on the annotation (`store: BaseStore` is required, `store: BaseStore | None` is not).
_INJECTABLE: tuple[tuple[str, frozenset[str] | None, str, Any], ...] = (
    ("config", CONFIG_ANNOTATIONS, "", _REQUIRED),
    ("writer", frozenset({"StreamWriter"}), "stream_writer", _no_op_writer),
    ("store", frozenset({"BaseStore"}), "store", _REQUIRED),
    ("store", frozenset({"Optional[BaseStore]"}), "store", None),
    ("previous", _ANY, "previous", _REQUIRED),
    ("runtime", _ANY, "", _REQUIRED),
)


def accepted_arguments(fn: Callable[..., Any]) -> dict[str, tuple[str, Any]]:
    """The injectable parameters `fn` declares: name -> (Runtime attribute, default)."""
    params = inspect.signature(fn).parameters
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    accepts: dict[str, tuple[str, Any]] = {}
    for name, spellings, attribute, default in _INJECTABLE:
        param = params.get(name)
        if param is None or param.kind not in kinds:
            continue
        annotation = param.annotation
        typed = spellings is not _ANY and annotation is not inspect.Parameter.empty
        if typed and annotation_name(annotation) not in spellings:  # type: ignore[operator]
            continue
        accepts[name] = (attribute, default)
    return accepts


class RunnableCallable(Runnable[Any, Any]):
    """`func` (sync) and/or `afunc` (async) as a Runnable. `trace`: the call is a traced run (callbacks
    see it start and end); `recurse`: a Runnable returned is invoked on the same input; `explode_args`:
    the input is `(args, kwargs)`; `kwargs`: bound keyword arguments."""

    def __init__(
        self,
        func: Callable[..., Any] | None,
        afunc: Callable[..., Awaitable[Any]] | None = None,
        *,
        name: str | None = None,
        tags: Sequence[str] | None = None,
        trace: bool = True,
        recurse: bool = True,
        explode_args: bool = False,
        **kwargs: Any,
    ) -> None:
        if func is None and afunc is None:
            raise ValueError("At least one of func or afunc must be provided.")
        main = func or afunc
        assert main is not None
        self.name = name or (None if getattr(main, "__name__", "<lambda>") == "<lambda>" else main.__name__)
        self.func = func
        self.afunc = afunc
        self.tags = tags
        self.kwargs = kwargs
        self.trace = trace
        self.recurse = recurse
        self.explode_args = explode_args
        warn_config_annotation(main)
        self.func_accepts = accepted_arguments(main)

    def __repr__(self) -> str:
        return f"{self.get_name()}(tags={self.tags!r}, recurse={self.recurse!r}, explode_args={self.explode_args!r})"

    def _arguments(
        self, input: Any, config: dict[str, Any], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's positional and keyword arguments: the input, bound and given keyword arguments,
        then the injected parameters not given (from the config's Runtime, or their defaults)."""
        if self.explode_args:
            args, own = input
            kwargs = {**self.kwargs, **own, **kwargs}
        else:
            args = (input,)
            kwargs = {**self.kwargs, **kwargs}
        runtime = config.get(CONF, {}).get(CONFIG_KEY_RUNTIME)
        for name, (attribute, default) in self.func_accepts.items():
            if name in kwargs:
                continue
            if name == "config":
                kwargs[name] = config
            elif runtime is not None and name == "runtime":
                kwargs[name] = runtime
            elif runtime is not None and hasattr(runtime, attribute):
                kwargs[name] = getattr(runtime, attribute)
            elif default is _REQUIRED:
                raise ValueError(f"Missing required config key '{attribute or name}' for '{self.name}'.")
            else:
                kwargs[name] = default
        return args, kwargs

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if self.func is None:
            raise TypeError(
                f'No synchronous function provided to "{self.name}".\nEither initialize with a synchronous '
                "function or invoke via the async API (ainvoke, astream, etc.)"
            )
        config = config if config is not None else ensure_config()
        args, call_kwargs = self._arguments(input, config, kwargs)
        if not self.trace:
            result = self.func(*args, **call_kwargs)
        else:
            manager = callback_manager_for_config(config, self.tags)
            run = manager.on_chain_start(
                None, input, name=config.get("run_name") or self.get_name(), run_id=config.pop("run_id", None)
            )
            try:
                with set_config_context({**config, "callbacks": run.get_child()}) as context:
                    result = context.run(self.func, *args, **call_kwargs)
            except BaseException as exc:
                run.on_chain_error(exc)
                raise
            run.on_chain_end(result)
        if self.recurse and isinstance(result, Runnable):
            return result.invoke(input, config)
        return result

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if self.afunc is None:
            return self.invoke(input, config, **kwargs)
        config = config if config is not None else ensure_config()
        args, call_kwargs = self._arguments(input, config, kwargs)
        if not self.trace:
            result = await self.afunc(*args, **call_kwargs)
        else:
            manager = async_callback_manager_for_config(config, self.tags)
            run = await manager.on_chain_start(
                None, input, name=config.get("run_name") or self.get_name(), run_id=config.pop("run_id", None)
            )
            try:
                result = await self.afunc(*args, **call_kwargs)
            except BaseException as exc:
                await run.on_chain_error(exc)
                raise
            await run.on_chain_end(result)
        if self.recurse and isinstance(result, Runnable):
            return await result.ainvoke(input, config)
        return result
