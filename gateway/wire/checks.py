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
