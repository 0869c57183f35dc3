"""A note for the model (the loop guard's nudge) added to the last user turn of a history, in any shape.

The text joins the last turn that can take it (each wire says which: a user message, a tool result),
so no turn is added or reordered and every tool call stays paired with its result. Items are copied,
never changed in place: the caller's history (and the guard's parsers' references to it) stay as sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Item = dict[str, Any]


def joined(content: Any, text: str, part: Item, empty: Any) -> Any:
    """Content with `text` after it: a string gets it after a blank line, a list of parts gets `part`,
    and missing content becomes `empty`."""
    if isinstance(content, str):
        return f"{content}\n\n{text}" if content else text
    if isinstance(content, list):
        return [*content, part]
    return empty


def with_note(body: Item, field: str, takes: Callable[[Item], bool], change: Callable[[Item], Item]) -> Item | None:
    """`body` with its last `field` item that `takes` the note replaced by `change(item)`; None if none."""
    items = body.get(field)
    if not isinstance(items, list):
        return None
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if isinstance(item, dict) and takes(item):
            return {**body, field: [*items[:index], change(item), *items[index + 1 :]]}
    return None
