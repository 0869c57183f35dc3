"""`langgraph._internal._constants`: the config key of the run's Runtime (the rest are stubs)."""

from agent_runtime.runtime import CONFIG_KEY_RUNTIME
from langgraph import _shim

__all__ = ["CONFIG_KEY_RUNTIME"]
__getattr__ = _shim.module_getattr(__name__)
