"""What a state or config class says about each field: whether its type admits None, its default
(LangGraph's `_internal._fields` rules, used to build pydantic models and JSON schemas of them)."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterator
from typing import Annotated, Any, NotRequired, Required, Union, get_origin, get_type_hints

REQUIRED: Any = ...  # a field's "default" when it has none: the caller must give it


def is_optional_type(hint: Any) -> bool:
    """True if `hint` admits None: `X | None`, `Optional[X]`, `Annotated[X | None, ...]`, a TypeVar
    bound to one, or None itself (not `type(None)`, as LangGraph)."""
    if isinstance(hint, types.UnionType):
        return any(arg is type(None) or is_optional_type(arg) for arg in hint.__args__)
    if hasattr(hint, "__origin__") and hasattr(hint, "__args__"):
        origin = get_origin(hint)
        if origin is Union:
            return any(arg is type(None) or is_optional_type(arg) for arg in hint.__args__)
        if origin is Annotated:
            return is_optional_type(hint.__args__[0])
        return origin is None
    bound = getattr(hint, "__bound__", None)
    if bound is not None:
        return is_optional_type(bound)
    return hint is None


def _required_marker(hint: Any) -> bool | None:
    """True for `Required[...]`, False for `NotRequired[...]` (also inside Annotated), else None."""
    origin = get_origin(hint)
    if origin is Required:
        return True
    if origin is NotRequired:
        return False
    if origin is Annotated or getattr(origin, "__args__", None):
        return _required_marker(hint.__args__[0])
    return None


def field_default(name: str, hint: Any, schema: type[Any]) -> Any:
    """The default of field `name` typed `hint` of `schema`: None when it may be left out (TypedDict
    NotRequired / total=False, or a type admitting None), the dataclass default, else REQUIRED."""
    marker = _required_marker(hint)
    if name in getattr(schema, "__optional_keys__", ()):
        return REQUIRED if marker else None
    if marker is not None:
        return REQUIRED if marker else None
    if dataclasses.is_dataclass(schema):
        field = next((f for f in dataclasses.fields(schema) if f.name == name), None)
        if field is not None:
            if field.default is not dataclasses.MISSING and field.default is not REQUIRED:
                return field.default
            if field.default_factory is not dataclasses.MISSING:
                return field.default_factory()
    return None if is_optional_type(hint) else REQUIRED


def _pydantic_field(cls: type[Any], name: str) -> tuple[Any, str | None]:
    field = getattr(cls, "model_fields", {}).get(name)
    if field is None:
        return None, None
    default = field.default
    if default is not None and type(default).__name__ == "PydanticUndefinedType":
        default = None
    return default, field.description


def enhanced_type_hints(cls: type[Any]) -> Iterator[tuple[str, Any, Any, str | None]]:
    """(name, type, default or None, description or None) of each field of a TypedDict, dataclass or
    pydantic model (the config schema's fields)."""
    for name, hint in get_type_hints(cls).items():
        default, description = _pydantic_field(cls, name)
        if name in vars(cls):  # a class attribute: the TypedDict / dataclass default
            default = vars(cls)[name]
        yield name, hint, default, description
