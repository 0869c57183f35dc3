"""Run configs as LangGraph merges them (`langgraph._internal._config`): `merge_configs` for a bound
config under a call's, `ensure_config` for a config with every key (inheriting the LangChain config of
the code calling, when there is one), and the callback managers a config describes.

langchain-core is imported only by what needs it (the callback managers), so merging
configs costs nothing extra for a graph that never meets LangChain."""

from __future__ import annotations

import os
import sys
from collections import ChainMap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.callbacks import AsyncCallbackManager, CallbackManager

CONF = "configurable"
# LangChain's RunnableConfig keys (langchain_core.runnables.config.CONFIG_KEYS); other keys given to
# ensure_config are configurable values.
CONFIG_KEYS = frozenset(
    ("tags", "metadata", "callbacks", "run_name", "max_concurrency", "recursion_limit", CONF, "run_id")
)
# A configurable that names one of these addresses its own checkpoints: it does not inherit the
# ambient configurable (a child graph invoked in a node would otherwise write under its parent's ns).
CHECKPOINT_COORDINATE_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
# configurable values ensure_config copies into metadata (those already in metadata stay).
PROPAGATE_TO_METADATA = frozenset(
    ("thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id", "assistant_id", "graph_id")
)
# configurable keys never sent to tracers as metadata (their value may be a credential).
_SECRET_MARKERS = ("key", "token", "secret", "password", "auth")


class DefaultRecursionLimit(int):
    """The limit ensure_config fills in when none is given. merge_configs skips values of this type
    (not any equal value: an explicit limit equal to the default still applies); a type survives
    copying and pickling, an identity would not."""


DEFAULT_RECURSION_LIMIT = DefaultRecursionLimit(os.environ.get("LANGGRAPH_DEFAULT_RECURSION_LIMIT", "10007"))


def is_not_empty(value: Any) -> bool:
    """None and empty containers are "not given"; other falsy values (0, "") are values."""
    if isinstance(value, list | tuple | dict):
        return len(value) > 0
    return value is not None


def _copy_mapping(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def merge_metadata(base: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, Any]:
    """`new` over `base` key by key, without mutating either. `lc_versions` (package versions several
    LangChain packages contribute to) merges one level deeper; mapping values are copied one level."""
    merged = {key: _copy_mapping(value) for key, value in (base or {}).items()}
    for key, value in (new or {}).items():
        if key == "lc_versions" and isinstance(merged.get(key), Mapping) and isinstance(value, Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = _copy_mapping(value)
    return merged


def merge_callbacks(base: Any, new: Any) -> Any:
    """Two `callbacks` values (None, a list of handlers, or a callback manager) as one."""
    if new is None:
        return base
    from langchain_core.callbacks import BaseCallbackManager

    if base is None:
        return new.copy() if isinstance(new, list | BaseCallbackManager) else new
    if isinstance(new, list):
        if isinstance(base, list):
            return base + new
        if isinstance(base, BaseCallbackManager):
            manager = base.copy()
            for handler in new:
                manager.add_handler(handler, inherit=True)
            return manager
    elif isinstance(new, BaseCallbackManager):
        if isinstance(base, list):
            manager = new.copy()
            for handler in base:
                manager.add_handler(handler, inherit=True)
            return manager
        if isinstance(base, BaseCallbackManager):
            return base.merge(new)
    raise NotImplementedError(f"Unsupported callback types: {type(base)}, {type(new)}")


def merge_configs(*configs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Later configs over earlier ones: configurable and metadata key by key, tags concatenated,
    callbacks merged, empty values skipped, and the injected default recursion limit ignored."""
    base: dict[str, Any] = {}
    for config in configs:
        for key, value in (config or {}).items():
            if not value:
                continue
            if key == "metadata":
                base[key] = merge_metadata(base.get(key), value)
            elif key == "tags":
                base[key] = [*base[key], *value] if base.get(key) else value
            elif key == CONF:
                base[key] = {**base[key], **value} if base.get(key) else value
            elif key == "callbacks":
                base[key] = merge_callbacks(base.get(key), value)
            elif key == "recursion_limit":
                if not isinstance(value, DefaultRecursionLimit):
                    base[key] = value
            else:
                base[key] = value
    base.setdefault(CONF, {})
    return base


def ambient_config() -> dict[str, Any] | None:
    """The LangChain config of the runnable calling us (its context variable), if any. Nothing can
    have set it while langchain-core is not loaded, and then it is not imported (every run asks)."""
    module = sys.modules.get("langchain_core.runnables.config")
    if module is None:
        return None
    config: dict[str, Any] | None = module.var_child_runnable_config.get()
    return config


def _starts_own_lineage(configs: Sequence[Mapping[str, Any] | None]) -> bool:
    return any(
        is_not_empty(((config or {}).get(CONF) or {}).get(key))
        for config in configs
        for key in CHECKPOINT_COORDINATE_KEYS
    )


def _with_ambient(empty: dict[str, Any], configs: Sequence[Mapping[str, Any] | None]) -> set[str]:
    """Fill `empty` from the ambient config; returns the tags it brought (not repeated after)."""
    ambient = ambient_config()
    if not ambient:
        return set()
    empty.update(
        {
            k: v.copy() if k in ("tags", "metadata", "callbacks", CONF) else v
            for k, v in ambient.items()
            if is_not_empty(v)
        }
    )
    if empty.get(CONF) and _starts_own_lineage(configs):
        empty[CONF] = {}
    return set(empty["tags"])


def _merge_into(empty: dict[str, Any], config: Mapping[str, Any], inherited_tags: set[str]) -> None:
    for key, value in config.items():
        if not is_not_empty(value):
            continue
        if key not in CONFIG_KEYS:
            empty[CONF][key] = value
        elif key == CONF:
            empty[key] = {**empty[key], **value} if empty.get(key) else dict(value)
        elif key == "callbacks":
            empty[key] = merge_callbacks(empty.get(key), value)
        elif key == "metadata":
            empty[key] = merge_metadata(empty.get(key), value)
        elif key == "tags":
            # a subgraph gets its parent's config both given and ambient: its tags would double
            own = [tag for tag in value if tag not in inherited_tags]
            empty[key] = [*empty[key], *own] if empty.get(key) else own
        else:
            empty[key] = value


def ensure_config(*configs: Mapping[str, Any] | None) -> dict[str, Any]:
    """A config with every key: the ambient LangChain config, then `configs` merged over it in order
    (as merge_configs; keys that are not config keys become configurable values). Checkpoint
    coordinates in configurable are copied to metadata for tracing."""
    empty: dict[str, Any] = {
        "tags": [],
        "metadata": ChainMap(),
        "callbacks": None,
        "recursion_limit": DEFAULT_RECURSION_LIMIT,
        CONF: {},
    }
    inherited_tags = _with_ambient(empty, configs)
    for config in configs:
        if config is not None:
            _merge_into(empty, config, inherited_tags)
    configurable, metadata = empty.get(CONF), empty.get("metadata")
    if configurable and metadata is not None:
        for key in PROPAGATE_TO_METADATA:
            if key not in metadata and configurable.get(key):
                metadata[key] = configurable[key]
    return empty


# config keys a checkpoint's metadata never copies: its coordinates and the node's bookkeeping
EXCLUDED_METADATA_KEYS = frozenset(
    (
        "thread_id",
        "checkpoint_id",
        "checkpoint_ns",
        "checkpoint_map",
        "langgraph_step",
        "langgraph_node",
        "langgraph_triggers",
        "langgraph_path",
        "langgraph_checkpoint_ns",
    )
)


def checkpoint_metadata(config: Mapping[str, Any]) -> dict[str, Any]:
    """What the run's config adds to each checkpoint's metadata, as LangGraph saves it: the scalar
    (str, int, float, bool) values of its metadata, then of its configurable, not private ("__")."""
    metadata: dict[str, Any] = {}
    for source in (config.get("metadata"), config.get(CONF)):
        for key, value in (source or {}).items():
            if not isinstance(key, str) or key in metadata or key in EXCLUDED_METADATA_KEYS or key.startswith("__"):
                continue
            if isinstance(value, str):
                metadata[key] = value.replace("\u0000", "")
            elif isinstance(value, int | float | bool):
                metadata[key] = value
    return metadata


def tracing_metadata(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The configurable values tracers get as metadata: plain scalars, no private or secret keys."""
    metadata = {
        key: value
        for key, value in (config.get(CONF) or {}).items()
        if not key.startswith("__")
        and isinstance(value, str | int | float | bool)
        and not any(marker in key.casefold() for marker in _SECRET_MARKERS)
    }
    return metadata or None


def _all_tags(config: Mapping[str, Any], tags: Sequence[str] | None) -> list[str] | None:
    own = config.get("tags")
    if tags is None:
        return own
    return [*own, *tags] if own is not None else list(tags)


def callback_manager_for_config(config: Mapping[str, Any], tags: Sequence[str] | None = None) -> CallbackManager:
    """The config's callback manager (its own, given tags and metadata, or a new one)."""
    from langchain_core.callbacks import CallbackManager

    return _manager_for_config(CallbackManager, config, tags)


def async_callback_manager_for_config(
    config: Mapping[str, Any], tags: Sequence[str] | None = None
) -> AsyncCallbackManager:
    from langchain_core.callbacks import AsyncCallbackManager

    return _manager_for_config(AsyncCallbackManager, config, tags)


def _manager_for_config(manager_type: Any, config: Mapping[str, Any], tags: Sequence[str] | None) -> Any:
    all_tags = _all_tags(config, tags)
    callbacks = config.get("callbacks")
    if callbacks and isinstance(callbacks, manager_type):
        if all_tags:
            callbacks.add_tags(all_tags)
        if metadata := config.get("metadata"):
            callbacks.add_metadata(metadata)
        return callbacks
    return manager_type.configure(
        inheritable_callbacks=callbacks,
        inheritable_tags=all_tags,
        inheritable_metadata=config.get("metadata"),
        langsmith_inheritable_metadata=tracing_metadata(config),
    )
