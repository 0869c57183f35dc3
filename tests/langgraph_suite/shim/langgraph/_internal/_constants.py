"""`langgraph._internal._constants`: the config key of the run's Runtime, the overwrite marker, the
interrupt key and the config keys of a checkpoint namespace (the rest are stubs)."""

from agent_runtime.channels.reducer import OVERWRITE_KEY as OVERWRITE
from agent_runtime.engine.spec import CONF, CONFIG_KEY_CHECKPOINT_NS, INTERRUPT
from agent_runtime.runtime import CONFIG_KEY_RUNTIME
from langgraph import _shim

__all__ = ["CONF", "CONFIG_KEY_CHECKPOINT_NS", "CONFIG_KEY_RUNTIME", "INTERRUPT", "OVERWRITE"]
__getattr__ = _shim.module_getattr(__name__)
