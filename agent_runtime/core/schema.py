"""State schemas (TypedDict, dataclass, pydantic): keys -> channels, managed values, coercion."""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NotRequired, Required, get_args, get_origin, get_type_hints

from typing_extensions import ReadOnly

from agent_runtime.channels import BaseChannel, BinaryOperatorAggregate, LastValue
from agent_runtime.core.types import IsLastStepManager, RemainingStepsManager
from agent_runtime.errors import InvalidUpdateError

Managed = type[RemainingStepsManager] | type[IsLastStepManager]


def _is_pydantic(cls: Any) -> bool:
    return isinstance(cls, type) and hasattr(cls, "model_fields") and hasattr(cls, "model_validate")


def _positional_arity(fn: Callable[..., Any]) -> int | None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return None
    # As LangGraph counts them: positional parameters with defaults too (add_messages(left=None, right=None)).
    return sum(1 for p in params if p.kind in kinds)


def _channel_item(item: Any, base: Any) -> BaseChannel | None:
    """An Annotated metadata item naming a channel: an instance, or a class made for the base type
    (LangGraph's `Annotated[int, EphemeralValue]`)."""
    if isinstance(item, BaseChannel):
        return item
    if isinstance(item, type) and issubclass(item, BaseChannel):
        return item(base)  # type: ignore[call-arg]
    return None


def field_channel(hint: Any) -> BaseChannel | None:
    """The channel an `Annotated[type, ..., <channel>, ...]` field declares, None if it declares none."""
    if get_origin(hint) is not Annotated:
        return None
    base, *meta = get_args(hint)
    return next((c for c in (_channel_item(item, base) for item in meta) if c is not None), None)


def warn_invalid_state_schema(schema: Any) -> None:
    """LangGraph's warning for a state schema that is neither a type nor a parameterized one
    (`Annotated[list, add]`, `list[str]`): a value given by mistake (`StateGraph({"a": 1})`)."""
    if isinstance(schema, type) or get_args(schema):
        return
    warnings.warn(
        f"Invalid state_schema: {schema}. Expected a type or Annotated[type, reducer]. "
        "Please provide a valid schema to ensure correct updates.\n"
        " See: https://langchain-ai.github.io/langgraph/reference/graphs/#stategraph",
        stacklevel=3,
    )


# TypedDict qualifiers around a key's type: its reducer is inside (NotRequired[Annotated[list, add]]).
_QUALIFIERS = (NotRequired, Required, ReadOnly)


def channel_for(key: str, hint: Any) -> BaseChannel | Managed:
    """The channel (or managed value) of state key `key` typed `hint` (LangGraph's `_get_channel`)."""
    while get_origin(hint) in _QUALIFIERS:
        hint = get_args(hint)[0]
    if get_origin(hint) is not Annotated:
        return LastValue(hint, key)
    base, *meta = get_args(hint)
    while get_origin(base) in _QUALIFIERS:
        base = get_args(base)[0]
    for item in reversed(meta):
        if item is RemainingStepsManager or item is IsLastStepManager:
            return item  # type: ignore[no-any-return]
        channel = _channel_item(item, base)
        if channel is not None:
            return channel.for_annotation(key, base)
        if callable(item):
            arity = _positional_arity(item)
            if arity is not None and arity != 2:
                raise ValueError(
                    f"Invalid reducer signature for state key '{key}': a reducer takes 2 positional "
                    f"arguments (current, update), {getattr(item, '__name__', item)!r} takes {arity}"
                )
            return BinaryOperatorAggregate(base, item, key)
    return LastValue(base, key)


ROOT = "__root__"  # the one channel of a graph whose state is a single value (`StateGraph(list[str])`)


class StateSchema:
    """What the runtime needs to know about a state class. A schema without fields (`int`, `list[str]`,
    `Annotated[list, add]`) is a root state: one channel `__root__` holding the whole state, which
    nodes get and return as it is."""

    def __init__(self, cls: Any) -> None:
        self.cls = cls
        self.is_pydantic = _is_pydantic(cls)
        self.is_dataclass = dataclasses.is_dataclass(cls)
        fieldless = not hasattr(cls, "__annotations__")
        if fieldless:
            warn_invalid_state_schema(cls)
        hints = {ROOT: cls} if fieldless else get_type_hints(cls, include_extras=True)
        if self.is_pydantic:
            hints = {k: v for k, v in hints.items() if k in cls.model_fields}
        self.channels: dict[str, BaseChannel] = {}
        self.managed: dict[str, Managed] = {}
        for key, hint in hints.items():
            spec = channel_for(key, hint)
            if isinstance(spec, BaseChannel):
                self.channels[key] = spec
            else:
                self.managed[key] = spec
        self.keys = frozenset(self.channels)
        # a class whose one field is `__root__` is a root state too (LangGraph's older spelling)
        self.is_root = self.keys == {ROOT} and not self.managed

    def input_reader(self) -> Callable[[dict[str, Any]], Any]:
        """A node's input from the state values when it reads this schema (its input schema, or the
        graph's state schema in a graph with more keys): this schema's keys only, coerced to it."""
        keys = self.keys | frozenset(self.managed)
        coerce = self.coerce if self.coerces else None

        def read(values: dict[str, Any]) -> Any:
            own = {k: v for k, v in values.items() if k in keys}
            return coerce(own) if coerce is not None else own

        return read

    def merge(self, other: StateSchema) -> None:
        """Add `other`'s keys (an input, output or node schema's) to this schema's channels."""
        for key, channel in other.channels.items():
            self.channels.setdefault(key, channel)
        for key, managed in other.managed.items():
            self.managed.setdefault(key, managed)
        self.keys = frozenset(self.channels)

    @property
    def coerces(self) -> bool:
        return self.is_pydantic or self.is_dataclass or self.is_root

    def coerce(self, values: dict[str, Any]) -> Any:
        """Node input: a dict for TypedDict states, an instance for dataclass/pydantic states, the value
        of a root state."""
        if self.is_root:
            return values.get(ROOT)
        if self.is_pydantic:
            return self.cls.model_validate(values)
        if self.is_dataclass:
            return self.cls(**values)
        return values

    def updates_from_object(self, obj: Any) -> list[tuple[str, Any]] | None:
        """Writes for a returned state object; None if `obj` is not a schema-like object."""
        if self.is_root:
            return [(ROOT, obj)]
        if _is_pydantic(type(obj)):
            explicitly_set = obj.model_fields_set
            fields = type(obj).model_fields
            out = []
            for key in self.keys:
                if key not in fields:
                    continue
                value = getattr(obj, key)
                # a None the object's own class defaults to, and that was not set: not an update
                if value is None and key not in explicitly_set and fields[key].default is None:
                    continue
                out.append((key, value))
            return out
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return [(k, getattr(obj, k)) for k in self.keys if hasattr(obj, k)]
        return None

    def input_dict(self, value: Any) -> dict[str, Any]:
        """Graph input as a dict of state keys (objects are unpacked)."""
        if self.is_root:
            return {ROOT: value}
        if isinstance(value, Mapping):
            return dict(value)
        from_object = self.updates_from_object(value)
        if from_object is None:
            raise InvalidUpdateError(f"Expected dict or {self.cls.__name__} as graph input, got {value!r}")
        return dict(from_object)
