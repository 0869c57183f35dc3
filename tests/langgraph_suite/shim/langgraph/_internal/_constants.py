"""`langgraph._internal._constants`: the config key of the run's Runtime, the overwrite marker and the
interrupt key (the rest are stubs)."""

from agent_runtime.channels.reducer import OVERWRITE_KEY as OVERWRITE
from agent_runtime.engine.spec import INTERRUPT
from agent_runtime.runtime import CONFIG_KEY_RUNTIME
from langgraph import _shim

__all__ = ["CONFIG_KEY_RUNTIME", "INTERRUPT", "OVERWRITE"]
__getattr__ = _shim.module_getattr(__name__)
