"""JSON mode: a request that asks for JSON output gets, as its reply text, a minimal instance of the schema.

Clients rely on it: Gemini CLI's model router asks for {complexity_reasoning, complexity_score} as JSON and
retries until the answer parses. Where each API asks for JSON: Chat Completions `response_format`
({"type": "json_schema", "json_schema": {"schema"}} or {"type": "json_object"}), Responses `text.format`
({"type": "json_schema", "schema"} or {"type": "json_object"}), Anthropic `output_format` / `output_config.format`
({"type": "json_schema", "schema"}). A plain JSON object request is the empty schema (any object).
"""

from __future__ import annotations

import json
import math
from typing import Any

JsonSchema = dict[str, Any]

_OPTIONAL_DEPTH = 4  # optional properties are filled in up to this depth (recursive schemas stay finite)
_MAX_DEPTH = 32  # a schema that requires itself forever has no finite instance: stop there


def _format_schema(response_format: Any, nested: bool) -> JsonSchema | None:
    """The schema of an OpenAI-style format object: `nested` is Chat's {"json_schema": {"schema"}}."""
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return {}
    if kind != "json_schema":
        return None
    holder = response_format.get("json_schema") if nested else response_format
    schema = holder.get("schema") if isinstance(holder, dict) else None
    return schema if isinstance(schema, dict) else {}


def chat_schema(body: dict[str, Any]) -> JsonSchema | None:
    """Chat Completions: `response_format`."""
    return _format_schema(body.get("response_format"), nested=True)


def responses_schema(body: dict[str, Any]) -> JsonSchema | None:
    """Responses: `text.format`."""
    text = body.get("text")
    return _format_schema(text.get("format"), nested=False) if isinstance(text, dict) else None


def anthropic_schema(body: dict[str, Any]) -> JsonSchema | None:
    """Anthropic structured outputs: `output_format`, or `format` inside `output_config`."""
    config = body.get("output_config")
    nested = config.get("format") if isinstance(config, dict) else None
    return _format_schema(body.get("output_format") or nested, nested=False)


def gemini_schema(body: dict[str, Any]) -> JsonSchema | None:
    """Gemini: `generationConfig.responseMimeType` application/json with `responseJsonSchema` (JSON
    Schema) or `responseSchema` (its OpenAPI subset)."""
    config = body.get("generationConfig")
    if not isinstance(config, dict) or config.get("responseMimeType") != "application/json":
        return None
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    return schema if isinstance(schema, dict) else {}


def json_reply(schema: JsonSchema) -> str:
    return json.dumps(minimal_instance(schema, schema), ensure_ascii=False)


def minimal_instance(schema: Any, root: JsonSchema, depth: int = 0) -> Any:
    """A small value valid for `schema` (JSON Schema, OpenAPI subset and Gemini's upper-case types alike):
    const, the first enum value, the first anyOf/oneOf branch, local $refs, objects with their properties,
    arrays of minItems items, the shortest string and a small number within the bounds."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    if "$ref" in schema:
        return minimal_instance(_resolve(str(schema["$ref"]), root), root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list) and branches:
            return minimal_instance({**_without(schema, combinator), **branches[0]}, root, depth + 1)
    if isinstance(schema.get("allOf"), list):
        return minimal_instance(_merged(schema, root), root, depth + 1)
    kind = _type(schema)
    if kind == "object":
        return _object(schema, root, depth)
    if kind == "array":
        count = _int(schema.get("minItems"), 0)
        return [minimal_instance(schema.get("items") or {}, root, depth + 1) for _ in range(count)]
    if kind == "string":
        return "x" * _int(schema.get("minLength"), 0)
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    return None


def _type(schema: JsonSchema) -> str:
    """The schema's type, lower-cased (Gemini writes STRING, OBJECT); the first non-null of a list; an
    untyped schema with properties, or none at all, is an object (JSON mode answers objects)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        named = [str(k).lower() for k in kind if str(k).lower() != "null"]
        return named[0] if named else "null"
    if isinstance(kind, str):
        return kind.lower()
    return "array" if "items" in schema else "object"


def _object(schema: JsonSchema, root: JsonSchema, depth: int) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        properties = {}
    required = {str(name) for name in schema.get("required") or [] if isinstance(name, str)}
    return {
        name: minimal_instance(sub, root, depth + 1)
        for name, sub in properties.items()
        if name in required or depth < _OPTIONAL_DEPTH
    }


def _number(schema: JsonSchema, *, integer: bool) -> int | float:
    """The lower bound, else 1 (clients check scores and counts against bounds that only their
    description states, such as Gemini CLI's "score from 1-100"), kept under a maximum."""
    low = _bound(schema.get("minimum"))
    exclusive = _bound(schema.get("exclusiveMinimum"))
    if exclusive is not None:
        low = exclusive + (1 if integer else 1e-9)
    if low is not None:
        return math.ceil(low) if integer else low
    high = _bound(schema.get("maximum"))
    return 1 if high is None or high >= 1 else math.floor(high)


def _bound(value: Any) -> int | float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _resolve(ref: str, root: JsonSchema) -> Any:
    """A local reference ("#/$defs/Item"); anything else resolves to the empty schema."""
    if not ref.startswith("#"):
        return {}
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def _without(schema: JsonSchema, key: str) -> JsonSchema:
    return {k: v for k, v in schema.items() if k != key}


def _merged(schema: JsonSchema, root: JsonSchema) -> JsonSchema:
    """allOf as one schema: the parts' keys (references followed), properties and required lists joined."""
    merged = _without(schema, "allOf")
    properties: dict[str, Any] = dict(merged.get("properties") or {})
    required: list[Any] = list(merged.get("required") or [])
    for part in schema["allOf"]:
        if isinstance(part, dict) and "$ref" in part:
            part = _resolve(str(part["$ref"]), root)
        if isinstance(part, dict):
            merged = {**merged, **part}
            properties.update(part.get("properties") or {})
            required += part.get("required") or []
    return {**merged, "properties": properties, "required": required} if properties else merged
