"""Pydantic models built at run time (a graph's input / output / config schema), as LangGraph builds
them: frozen, any field name allowed (a `_private` or `model_dump` field is stored under another name
with the original as its alias), arbitrary types allowed, and cached when the definitions hash."""

from __future__ import annotations

import dataclasses
import functools
import sys
import typing
from typing import Any

import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, RootModel
from pydantic import create_model as pydantic_create_model
from pydantic.fields import FieldInfo

_CONFIG = ConfigDict(arbitrary_types_allowed=True, frozen=True, protected_namespaces=())
_NO_DEFAULT: Any = object()
# BaseModel's public attributes: a field of one of these names would shadow it
_RESERVED = frozenset(name for name in dir(BaseModel) if not name.startswith("_"))


def _remapped(fields: dict[str, Any]) -> dict[str, Any]:
    """Fields whose names pydantic reserves (leading "_", BaseModel attributes) under "private_<name>",
    aliased back to their name."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if not key.startswith("_") and key not in _RESERVED:
            out[key] = value
            continue
        if isinstance(value, FieldInfo):
            raise NotImplementedError(f"Field {key!r} (a reserved name) cannot be given as a pydantic Field")
        typ, default = value
        title = key.lstrip("_").replace("_", " ").title()
        out[f"private_{key}"] = (typ, Field(default=default, alias=key, serialization_alias=key, title=title))
    return out


def _fields_model(name: str, fields: dict[str, Any]) -> type[BaseModel]:
    return pydantic_create_model(name, __config__=_CONFIG, **_remapped(fields))  # type: ignore[call-overload, no-any-return]


def _root_model(name: str, typ: Any, default: Any = _NO_DEFAULT) -> type[BaseModel]:
    namespace: dict[str, Any] = {
        "__annotations__": {"root": typ},
        "model_config": ConfigDict(arbitrary_types_allowed=True),
        "__module__": __name__,
    }
    if default is not _NO_DEFAULT:
        namespace["root"] = default
    return type(name, (RootModel,), namespace)


@functools.lru_cache(maxsize=256)
def _cached_fields_model(name: str, /, **fields: Any) -> type[BaseModel]:
    return _fields_model(name, fields)


@functools.lru_cache(maxsize=256)
def _cached_root_model(name: str, typ: Any, default: Any = _NO_DEFAULT) -> type[BaseModel]:
    return _root_model(name, typ, default)


def create_model(name: str, *, field_definitions: dict[str, Any] | None = None, root: Any = None) -> type[BaseModel]:
    """A model named `name` of fields `{name: (type, default)}` (default `...`: required), or of one
    value (`root`: a type, or `(type, default)`)."""
    fields = field_definitions or {}
    if root:
        if fields:
            raise NotImplementedError(f"A root model has no other fields, got {fields}")
        args = root if isinstance(root, tuple) else (root,)
        try:
            return _cached_root_model(name, *args)
        except TypeError:  # an unhashable type or default
            return _root_model(name, *args)
    try:
        return _cached_fields_model(name, **fields)
    except TypeError:
        return _fields_model(name, fields)


def is_supported_by_pydantic(typ: Any) -> bool:
    """True for the container types pydantic validates as a whole: dataclasses, models, TypedDicts
    (typing.TypedDict only from Python 3.12, as pydantic)."""
    if dataclasses.is_dataclass(typ) or (isinstance(typ, type) and issubclass(typ, BaseModel)):
        return True
    for base in getattr(typ, "__orig_bases__", ()):
        if base is typing_extensions.TypedDict:
            return True
        if base is typing.TypedDict and sys.version_info >= (3, 12):
            return True
    return False
