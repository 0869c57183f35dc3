"""What LangGraph reads off a node's (or a conditional edge's path function's) signature: its name,
and its input schema, the class its first parameter is annotated with. A node with an input schema
of its own gets only that schema's keys (their channels join the graph's state), coerced to it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, get_type_hints


def node_name(action: Any) -> str:
    """The name `add_node(action)` gives a node: a Runnable's or graph's `name`, a function's
    `__name__`, or the class name of a callable object."""
    name = getattr(action, "name", None)
    if isinstance(name, str) and name:
        return name
    if isinstance(action, functools.partial):
        return node_name(action.func)
    return getattr(action, "__name__", type(action).__name__)


def _is_plain_callable(fn: Any) -> bool:
    return inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.ismethod(getattr(fn, "__call__", None))  # noqa: B004


def inferred_input_schema(fn: Callable[..., Any]) -> type[Any] | None:
    """The class `fn`'s first parameter is annotated with, if it is one with fields (a TypedDict,
    dataclass or model); None otherwise (no annotation, a plain type, a hint that does not resolve)."""
    if not _is_plain_callable(fn):
        return None
    try:
        hints = get_type_hints(fn.__call__) or get_type_hints(fn)  # type: ignore[operator]
        first = next(iter(inspect.signature(fn).parameters))
        hint = hints.get(first)
        if isinstance(hint, type) and get_type_hints(hint):
            return hint
    except (NameError, TypeError, StopIteration, ValueError):
        return None
    return None
