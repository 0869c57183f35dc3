"""Run configs (LangChain's `RunnableConfig` dicts) merged and completed as LangGraph does, and the
callback managers built from them (LangGraph's `_internal/_config.py` rules).

* `merge_configs(*configs)`: later values win; `metadata` and `configurable` merge key by key (the
  `lc_versions` mapping of metadata one level deeper), `tags` concatenate, `callbacks` combine, and the
  default recursion limit `ensure_config` fills in never replaces an explicit one.
* `ensure_config(*configs)`: the same over the ambient config of the node running here (a graph run
  inside a node is its subgraph), every key present; a config naming a checkpoint of its own (a thread)
  drops the ambient configurable; the run's ids in configurable are copied into metadata.

Only the callback managers import langchain-core, when built."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.callbacks import AsyncCallbackManager, CallbackManager


class DefaultRecursionLimit(int):
    """The recursion limit `ensure_config` fills in: `merge_configs` does not let it replace another
    limit (by type, which survives copies and pickling; an explicit equal value still applies)."""


DEFAULT_RECURSION_LIMIT = DefaultRecursionLimit(os.environ.get("LANGGRAPH_DEFAULT_RECURSION_LIMIT", "10007"))
# configurable keys copied into metadata (a tracer groups runs by them)
PROPAGATE_TO_METADATA = ("thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id", "assistant_id", "graph_id")
# configurable keys naming a checkpoint: a config with one addresses a graph of its own, not the node's
COORDINATES = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
# the keys of a RunnableConfig (any other key of a config given to ensure_config goes to configurable)
CONFIG_KEYS = (
    "tags",
    "metadata",
    "callbacks",
    "run_name",
    "max_concurrency",
    "recursion_limit",
    "configurable",
    "run_id",
)
_COPIED = ("tags", "metadata", "callbacks", "configurable")  # ambient values a config may change
_SECRET_PARTS = ("key", "token", "secret", "password", "auth")


def ambient_config() -> dict[str, Any] | None:
    """The config of the node whose code runs here (LangChain's ambient config); None outside a node.
    Nothing can have set it while langchain-core is not loaded, and then it is not imported."""
    module = sys.modules.get("langchain_core.runnables.config")
    if module is None:
        return None
    config: dict[str, Any] | None = module.var_child_runnable_config.get()
    return config


def is_not_empty(value: Any) -> bool:
    """A config value that counts: not None, nor an empty list, tuple or dict."""
    if isinstance(value, list | tuple | dict):
        return len(value) > 0
    return value is not None


def merge_metadata(base: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, Any]:
    """`new` over `base`, key by key; `lc_versions` (package versions several libraries add to) merges
    one level deeper. Mapping values are copied one level; the inputs are not changed."""
    merged = {key: dict(value) if isinstance(value, Mapping) else value for key, value in (base or {}).items()}
    for key, value in (new or {}).items():
        if key == "lc_versions" and isinstance(merged.get(key), Mapping) and isinstance(value, Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = dict(value) if isinstance(value, Mapping) else value
    return merged


def merge_callbacks(base: Any, new: Any) -> Any:
    """Two `callbacks` values (None, a list of handlers or a manager) as one, `new`'s handlers last."""
    if new is None:
        return base
    if base is None:
        return new.copy()
    if isinstance(base, list) and isinstance(new, list):
        return base + new
    from langchain_core.callbacks import BaseCallbackManager

    if isinstance(base, BaseCallbackManager) and isinstance(new, BaseCallbackManager):
        return base.merge(new)
    manager, handlers = (base, new) if isinstance(base, BaseCallbackManager) else (new, base)
    if not isinstance(manager, BaseCallbackManager) or not isinstance(handlers, list):
        raise NotImplementedError(f"Unsupported callback types: {type(base)}, {type(new)}")
    merged = manager.copy()
    for handler in handlers:
        merged.add_handler(handler, inherit=True)
    return merged


def merge_configs(*configs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The configs merged, later ones over earlier ones (module docstring); empty values are skipped."""
    merged: dict[str, Any] = {}
    for config in configs:
        for key, value in (config or {}).items():
            if not value:
                continue
            if key == "metadata":
                merged[key] = merge_metadata(merged.get(key), value)
            elif key == "tags":
                merged[key] = [*merged.get(key, ()), *value]
            elif key == "configurable":
                merged[key] = {**merged.get(key, {}), **value}
            elif key == "callbacks":
                merged[key] = merge_callbacks(merged.get(key), value)
            elif key != "recursion_limit" or not isinstance(value, DefaultRecursionLimit):
                merged[key] = value
    merged.setdefault("configurable", {})
    return merged


def ensure_config(*configs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The configs over the ambient one, every RunnableConfig key present (module docstring)."""
    config: dict[str, Any] = {
        "tags": [],
        "metadata": {},
        "callbacks": None,
        "recursion_limit": DEFAULT_RECURSION_LIMIT,
        "configurable": {},
    }
    ambient = ambient_config()
    inherited_tags: set[str] = set()
    if ambient:
        for key, value in ambient.items():
            if is_not_empty(value):
                config[key] = value.copy() if key in _COPIED else value
        inherited_tags.update(config["tags"])
        if any(_names_checkpoint(c) for c in configs):
            config["configurable"] = {}
    for given in configs:
        for key, value in (given or {}).items():
            if not is_not_empty(value):
                continue
            if key not in CONFIG_KEYS:
                config["configurable"][key] = value
            elif key == "configurable":
                config[key] = {**config[key], **value}
            elif key == "callbacks":
                config[key] = merge_callbacks(config[key], value)
            elif key == "metadata":
                config[key] = merge_metadata(config[key], value)
            elif key == "tags":
                config[key] = [*config[key], *(t for t in value if t not in inherited_tags)]
            else:
                config[key] = value
    metadata, configurable = config["metadata"], config["configurable"]
    for key in PROPAGATE_TO_METADATA:
        if key not in metadata and configurable.get(key):
            metadata[key] = configurable[key]
    return config


def _names_checkpoint(config: Mapping[str, Any] | None) -> bool:
    configurable = (config or {}).get("configurable") or {}
    return any(is_not_empty(configurable.get(key)) for key in COORDINATES)


def tracing_metadata(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The configurable values tracers (LangSmith) add to a run's metadata: plain values whose key is not
    private (`__...`) and does not look like a secret."""
    metadata = {
        key: value
        for key, value in (config.get("configurable") or {}).items()
        if not key.startswith("__")
        and isinstance(value, str | int | float | bool)
        and not any(part in key.casefold() for part in _SECRET_PARTS)
    }
    return metadata or None


def _tags(config: Mapping[str, Any], tags: Sequence[str] | None) -> list[str] | None:
    own = config.get("tags")
    if own is None:
        return None if tags is None else list(tags)
    return [*own, *(tags or ())]


def callback_manager_for_config(config: Mapping[str, Any], tags: Sequence[str] | None = None) -> CallbackManager:
    """The callback manager of a config: its manager (given the config's tags and metadata), or one
    configured from its handlers, tags and metadata."""
    from langchain_core.callbacks import CallbackManager

    all_tags = _tags(config, tags)
    callbacks = config.get("callbacks")
    if callbacks and isinstance(callbacks, CallbackManager):
        if all_tags:
            callbacks.add_tags(all_tags)
        if config.get("metadata"):
            callbacks.add_metadata(config["metadata"])
        return callbacks
    return CallbackManager.configure(
        inheritable_callbacks=callbacks,
        inheritable_tags=all_tags,
        inheritable_metadata=config.get("metadata"),
        langsmith_inheritable_metadata=tracing_metadata(config),
    )


def async_callback_manager_for_config(
    config: Mapping[str, Any], tags: Sequence[str] | None = None
) -> AsyncCallbackManager:
    """`callback_manager_for_config` for async code."""
    from langchain_core.callbacks import AsyncCallbackManager

    all_tags = _tags(config, tags)
    callbacks = config.get("callbacks")
    if callbacks and isinstance(callbacks, AsyncCallbackManager):
        if all_tags:
            callbacks.add_tags(all_tags)
        if config.get("metadata"):
            callbacks.add_metadata(config["metadata"])
        return callbacks
    return AsyncCallbackManager.configure(
        inheritable_callbacks=callbacks,
        inheritable_tags=all_tags,
        inheritable_metadata=config.get("metadata"),
        langsmith_inheritable_metadata=tracing_metadata(config),
    )
