"""How LangGraph shows a task to users: its writes (get_state / history `tasks[].result`, the "debug"
stream's `task_result`: its state-key writes folded into a dict, internal channels left out) and its
start (the "tasks" / "debug" stream's `task` event, with the run's user metadata and tags)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

# the framework's metadata keys: a task's own fields and namespace say the same
from agent_runtime.core.run_config import EXCLUDED_METADATA_KEYS
from agent_runtime.core.schema import ROOT

_ROOT_KEYS = frozenset({ROOT})

HIDDEN_TAG = "langsmith:hidden"  # a task so tagged gets no "task" event


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


def snapshot_task_result(writes: Iterable[tuple[str, Any]], keys: frozenset[str]) -> Any:
    """A task's result in get_state / history: as `task_result`, but a graph whose state is one value
    (`StateGraph(list[str])`) shows that value itself, None without a write (LangGraph's tasks_w_writes)."""
    result = task_result(writes, keys)
    return result.get(ROOT) if keys == _ROOT_KEYS else result


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


def user_metadata(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The metadata a task event carries: the config's, framework keys left out, with its tags (but
    langchain's `seq:step:*` bookkeeping) under "tags"; None when nothing is left. A new dict."""
    if config is None:
        return None
    metadata = {k: v for k, v in (config.get("metadata") or {}).items() if k not in EXCLUDED_METADATA_KEYS}
    tags = [tag for tag in config.get("tags") or () if not tag.startswith("seq:step")]
    if tags:
        metadata["tags"] = tags
    return metadata or None


def task_payload(task_id: str, name: str, input: Any, triggers: Any, metadata: dict[str, Any] | None) -> dict[str, Any]:
    """A "task" event (LangGraph's TaskPayload): `metadata` only when there is some."""
    payload = {"id": task_id, "name": name, "input": input, "triggers": triggers}
    if metadata:
        payload["metadata"] = dict(metadata)
    return payload


def map_debug_tasks(tasks: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """The "task" events of tasks with `id`, `name`, `input`, `triggers` and `config` (LangGraph's
    `langgraph.pregel.debug.map_debug_tasks`); hidden tasks have none."""
    for task in tasks:
        config = task.config
        if config is not None and HIDDEN_TAG in config.get("tags", ()):
            continue
        yield task_payload(task.id, task.name, task.input, task.triggers, user_metadata(config))
