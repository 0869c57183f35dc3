"""Canonical tool schemas: the same tools always serialise to the same bytes (tools sorted by name, the
keys of every schema node sorted), without reordering anything the model reads as content.

What the model reads in order is kept in the caller's order: the names a schema defines (`properties`,
`$defs`, ...: strict mode fills arguments in `properties` order, so sorting them changes the answers), and
data (`enum`, `const`, `default`, `examples`). A caller sends the same tools in the same order on every
request, so their order is already stable; what varies between requests and clients is the order of the
keywords and of the tool envelope's keys (`type` before `description` or after), which say nothing to the
model and are sorted.
"""

from __future__ import annotations

from typing import Any

from gateway.pacing import CHUNK, Steps

# Keywords whose value maps caller-chosen names to schemas (or to lists of names): names kept in order.
NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependentRequired"}
)
# Keywords whose value is data rather than schema: kept exactly as sent.
DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "example"})


def canonical_schema(value: Any) -> Any:
    """`value` with the keys of its objects sorted, except inside name maps and data (see above)."""
    if isinstance(value, list):
        return [canonical_schema(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {key: _member(key, value[key]) for key in sorted(value)}


def _member(key: str, value: Any) -> Any:
    if key in DATA_KEYWORDS:
        return value
    if key in NAME_MAPS and isinstance(value, dict):
        return {name: canonical_schema(schema) for name, schema in value.items()}
    return canonical_schema(value)


def tool_name(tool: Any) -> str:
    """OpenAI tools name their function; Anthropic tools are named directly."""
    if not isinstance(tool, dict):
        return ""
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else tool.get("name")
    return str(name or "")


def canonical_tools_steps(tools: list[Any]) -> Steps[list[Any]]:
    """Tools in a stable order (by name; the sort is stable for unnamed ones), each canonical.

    The client's cache_control marks survive: they are keys like any other.
    """
    canonical: list[Any] = []
    for index, tool in enumerate(sorted(tools, key=tool_name)):
        canonical.append(canonical_schema(tool))
        if index % CHUNK == CHUNK - 1:
            yield
    return canonical
