"""Pydantic models and JSON schemas of what a graph takes and returns, titled as LangGraph titles them
(`<graph name>Input` / `<graph name>Output`: "LangGraphInput" for an unnamed graph)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, TypeAdapter

from agent_runtime.channels import BaseChannel
from agent_runtime.core.models import create_model
from agent_runtime.core.schema import ROOT, StateSchema


def channels_model(
    title: str, channels: Mapping[str, BaseChannel], names: str | Sequence[str], *, output: bool
) -> type[BaseModel]:
    """The model of a graph's input (the update type of its input channels) or output (the value type
    of its output channels): one channel's type as it is, several as a dict of optional keys."""
    if isinstance(names, str):
        channel = channels[names]
        return create_model(title, root=channel.ValueType if output else channel.UpdateType)
    types = {n: channels[n].ValueType if output else channels[n].UpdateType for n in names}
    return create_model(title, field_definitions={n: (typ, None) for n, typ in types.items()})


def state_json_schema(schema: Any, title: str) -> dict[str, Any]:
    """The JSON schema of a StateGraph's input or output schema: pydantic's for a TypedDict, dataclass
    or model (a dataclass field whose type admits None is optional even without a default, as in
    LangGraph); a root state's value (`StateGraph(list[str])`) as a model titled `title`."""
    if schema is None:
        return {"title": title, "type": "object"}
    if not hasattr(schema, "__annotations__"):
        return create_model(title, root=(StateSchema(schema).channels[ROOT].UpdateType, None)).model_json_schema()
    json_schema: dict[str, Any] = TypeAdapter(schema).json_schema()
    if dataclasses.is_dataclass(schema) and "required" in json_schema:
        hints = get_type_hints(schema, include_extras=True)
        json_schema["required"] = [k for k in json_schema["required"] if not _admits_none(hints.get(k))]
    return json_schema


def _admits_none(hint: Any) -> bool:
    if hint is None or hint is type(None):
        return True
    if get_origin(hint) is Annotated:
        return _admits_none(get_args(hint)[0])
    return get_origin(hint) in (Union, UnionType) and type(None) in get_args(hint)


def context_json_schema(context_schema: Any) -> dict[str, Any] | None:
    """The JSON schema of a graph's `context_schema` (a model, TypedDict or dataclass), None without one."""
    if context_schema is None:
        return None
    if isinstance(context_schema, type) and issubclass(context_schema, BaseModel):
        return context_schema.model_json_schema()
    if dataclasses.is_dataclass(context_schema) or hasattr(context_schema, "__required_keys__"):
        return TypeAdapter(context_schema).json_schema()  # type: ignore[no-any-return]
    raise ValueError(f"Invalid context schema type: {context_schema}. Must be a BaseModel, TypedDict or dataclass.")


def graph_name(name: str, suffix: str) -> str:
    """LangChain's Runnable.get_name: "LangGraph" + "Input" -> "LangGraphInput", "my" -> "my_input"."""
    return name + suffix.title() if name[:1].isupper() else f"{name}_{suffix.lower()}"
