"""Node caching (`add_node(..., cache_policy=CachePolicy(...))` with `compile(cache=...)`): a node whose
input was seen before returns its saved result instead of running, as LangGraph's node cache. The
cache is LangGraph's BaseCache interface (get / set / clear by (namespace, key), and their async forms).

The wrapper is put around the node function at compile time, so nodes without a policy pay nothing."""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_runtime.engine import context
from agent_runtime.engine.spec import is_async_callable, takes_config

CACHE_NS = "__pregel_ns_writes"  # LangGraph's namespace of cached node results


def _frozen(obj: Any, depth: int = 10) -> Hashable:
    """`obj` as a hashable value with the same contents (dict items sorted, sequences as tuples)."""
    if isinstance(obj, Hashable) or depth <= 0:
        return obj
    if isinstance(obj, Mapping):
        return tuple(sorted((k, _frozen(v, depth - 1)) for k, v in obj.items()))
    if isinstance(obj, Sequence):
        return tuple(_frozen(x, depth - 1) for x in obj)
    if hasattr(obj, "tobytes"):  # numpy / pandas arrays
        return (type(obj).__name__, obj.tobytes(), getattr(obj, "shape", None))
    return obj  # type: ignore[no-any-return]


def default_cache_key(*args: Any, **kwargs: Any) -> str | bytes:
    """The pickled (frozen) arguments: equal inputs, equal keys."""
    return pickle.dumps((_frozen(args), _frozen(kwargs)), protocol=5, fix_imports=False)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """How a node's results are cached: `key_func(input)` names an entry, kept `ttl` seconds (None:
    until the cache is cleared)."""

    key_func: Callable[..., str | bytes] = field(default=default_cache_key)
    ttl: int | None = None


def namespace(node: str) -> tuple[str, ...]:
    return (CACHE_NS, node)


def _entry(ns: tuple[str, ...], policy: CachePolicy, *args: Any, **kwargs: Any) -> tuple[tuple[str, ...], str]:
    key = policy.key_func(*args, **kwargs)
    return ns, hashlib.blake2b(key.encode() if isinstance(key, str) else key, digest_size=16).hexdigest()


def _mark_cached() -> None:
    scratch = context.current()
    scratch.task.cached = True


def cached_node(name: str, fn: Callable[..., Any], policy: CachePolicy, cache: Any) -> Callable[..., Any]:
    """`fn` (as the engine calls it) returning the cached result for an input seen before."""
    with_config = takes_config(fn)
    ns = namespace(name)

    if is_async_callable(fn):

        async def acall(state: Any, config: dict[str, Any]) -> Any:
            key = _entry(ns, policy, state)
            found = await cache.aget([key])
            if key in found:
                _mark_cached()
                return found[key]
            result = await (fn(state, config) if with_config else fn(state))
            await cache.aset({key: (result, policy.ttl)})
            return result

        return acall

    def call(state: Any, config: dict[str, Any]) -> Any:
        key = _entry(ns, policy, state)
        found = cache.get([key])
        if key in found:
            _mark_cached()
            return found[key]
        result = fn(state, config) if with_config else fn(state)
        cache.set({key: (result, policy.ttl)})
        return result

    return call


def _run_cache() -> Any:
    """The cache of the graph running the current task (`entrypoint(cache=...)`), None without one."""
    scratch = context.running()
    return getattr(scratch.run.graph, "cache", None) if scratch is not None else None


def cached_call(name: str, fn: Callable[..., Any], policy: CachePolicy) -> Callable[..., Any]:
    """A `@task(cache_policy=...)` function: the cached result for arguments seen before, when the
    entrypoint calling it has a cache."""
    ns = namespace(name)

    if is_async_callable(fn):

        async def acall(*args: Any, **kwargs: Any) -> Any:
            cache = _run_cache()
            if cache is None:
                return await fn(*args, **kwargs)
            key = _entry(ns, policy, *args, **kwargs)
            found = await cache.aget([key])
            if key in found:
                return found[key]
            result = await fn(*args, **kwargs)
            await cache.aset({key: (result, policy.ttl)})
            return result

        return acall

    def call(*args: Any, **kwargs: Any) -> Any:
        cache = _run_cache()
        if cache is None:
            return fn(*args, **kwargs)
        key = _entry(ns, policy, *args, **kwargs)
        found = cache.get([key])
        if key in found:
            return found[key]
        result = fn(*args, **kwargs)
        cache.set({key: (result, policy.ttl)})
        return result

    return call
