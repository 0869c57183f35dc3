"""`langgraph._internal._constants`: the config key of the run's Runtime and the overwrite marker
the entrypoint's `previous` channel (the rest are stubs)."""

from agent_runtime.channels.reducer import OVERWRITE_KEY as OVERWRITE
from agent_runtime.func import PREVIOUS
from agent_runtime.runtime import CONFIG_KEY_RUNTIME
from langgraph import _shim

__all__ = ["CONFIG_KEY_RUNTIME", "OVERWRITE", "PREVIOUS"]
__getattr__ = _shim.module_getattr(__name__)
