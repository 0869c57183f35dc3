"""`langgraph._internal._config` -> agent_runtime.core.run_config (merging and completing run configs,
the callback managers of a config)."""

from agent_runtime.core.run_config import CONFIG_KEYS, DEFAULT_RECURSION_LIMIT, ensure_config, merge_configs
from agent_runtime.core.run_config import DefaultRecursionLimit as _DefaultRecursionLimit
from agent_runtime.core.run_config import async_callback_manager_for_config as get_async_callback_manager_for_config
from agent_runtime.core.run_config import callback_manager_for_config as get_callback_manager_for_config
from agent_runtime.core.run_config import is_not_empty as _is_not_empty
from agent_runtime.core.run_config import merge_callbacks as _merge_callbacks
from agent_runtime.core.run_config import merge_metadata as _merge_metadata
from agent_runtime.core.run_config import tracing_metadata as _get_tracing_metadata_defaults
from agent_runtime.streaming.messages import filter_to_user_tags
from langgraph import _shim

__all__ = [
    "CONFIG_KEYS",
    "DEFAULT_RECURSION_LIMIT",
    "_DefaultRecursionLimit",
    "_get_tracing_metadata_defaults",
    "_is_not_empty",
    "_merge_callbacks",
    "_merge_metadata",
    "ensure_config",
    "filter_to_user_tags",
    "get_async_callback_manager_for_config",
    "get_callback_manager_for_config",
    "merge_configs",
]
__getattr__ = _shim.module_getattr(__name__)
