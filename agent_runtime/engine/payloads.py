"""How LangGraph shows a task's writes to users (get_state / history `tasks[].result`, the "debug"
stream's `task_result`): its state-key writes folded into a dict, internal channels left out."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def task_result(writes: Iterable[tuple[str, Any]], keys: frozenset[str]) -> dict[str, Any]:
    """`{key: value}`; a key written more than once: `{key: {"$writes": [v1, v2, ...]}}` (LangGraph's
    map_task_result_writes)."""
    result: dict[str, Any] = {}
    repeated: dict[str, list[Any]] = {}
    for key, value in writes:
        if key not in keys:
            continue
        if key in repeated:
            repeated[key].append(value)
        elif key in result:
            repeated[key] = [result[key], value]
            result[key] = {"$writes": repeated[key]}
        else:
            result[key] = value
    return result


def task_update(writes: Iterable[tuple[str, Any]], keys: frozenset[str]) -> Any:
    """A finished task's "updates" chunk value: None without state writes, a dict of them, or one dict
    per write when a key is written more than once (a list of Commands, `Command(update=[(k, v), ...])`),
    as LangGraph's map_output_updates."""
    updates = [(k, v) for k, v in writes if k in keys]
    if not updates:
        return None
    if len(updates) > 1 and len({k for k, _ in updates}) < len(updates):
        return [{k: v} for k, v in updates]
    return dict(updates)
