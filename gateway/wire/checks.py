"""Small shared validators for request bodies; each raises a 400 naming the field."""

from __future__ import annotations

from typing import Any

from gateway.errors import bad_request


def require_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad_request("Request body must be a JSON object.")
    return body


def require_str(body: dict[str, Any], field: str) -> str:
    value = body.get(field)
    if not isinstance(value, str) or not value:
        raise bad_request(f"'{field}' is required and must be a non-empty string.", param=field)
    return value


def require_list(body: dict[str, Any], field: str, *, non_empty: bool = True) -> list[Any]:
    value = body.get(field)
    if not isinstance(value, list) or (non_empty and not value):
        raise bad_request(f"'{field}' is required and must be a non-empty array.", param=field)
    return value


def optional_type(body: dict[str, Any], field: str, kinds: tuple[type, ...], label: str) -> None:
    value = body.get(field)
    is_bool = isinstance(value, bool)
    if value is not None and (not isinstance(value, kinds) or (is_bool and bool not in kinds)):
        raise bad_request(f"'{field}' must be {label}.", param=field)


def check_sampling(body: dict[str, Any]) -> None:
    optional_type(body, "stream", (bool,), "a boolean")
    optional_type(body, "temperature", (int, float), "a number")
    optional_type(body, "top_p", (int, float), "a number")
    optional_type(body, "tools", (list,), "an array")


JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (list, "an array"),
    (dict, "an object"),
)


def json_type(value: Any) -> str:
    """The JSON type of a parsed value, for error messages ('got an integer')."""
    if value is None:
        return "null"
    return next((label for kind, label in JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def expect(where: str, value: Any, kinds: tuple[type, ...], label: str) -> None:
    """400 unless `value` (at path `where`) is one of `kinds` (a bool is not a number here)."""
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise bad_request(f"{where}: expected {label}, got {json_type(value)}.", param=where)


def typed_object(where: str, value: Any) -> dict[str, Any]:
    """A content block / part / tool: an object with a string 'type'."""
    expect(where, value, (dict,), "an object")
    expect(f"{where}.type", value.get("type"), (str,), "a string")
    return value


def optional(where: str, value: Any, kinds: tuple[type, ...], label: str) -> None:
    if value is not None:
        expect(where, value, kinds, label)


def check_stream_options(body: dict[str, Any]) -> None:
    """The upstream path merges `include_usage` into it and the relay reads it back."""
    options = body.get("stream_options")
    optional("stream_options", options, (dict,), "an object")
    if isinstance(options, dict):
        optional("stream_options.include_usage", options.get("include_usage"), (bool,), "a boolean")


def pairing_start(messages: list[dict[str, Any]], known: int, answering: tuple[str, ...]) -> int:
    """Where a tool-pairing check resumes for a history whose first `known` messages passed it: the last
    of them whose role is not one of those `answering` calls (no call is pending before such a message,
    or the check would have failed there)."""
    start = known - 1
    while start > 0 and messages[start]["role"] in answering:
        start -= 1
    return max(start, 0)
