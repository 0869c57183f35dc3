"""`langgraph._internal._constants`: the config key of the run's Runtime, the overwrite marker, the
entrypoint's `previous` channel and the reserved write channels (the rest are stubs)."""

from agent_runtime.channels.reducer import OVERWRITE_KEY as OVERWRITE
from agent_runtime.engine.spec import ERROR, INTERRUPT, NO_WRITES, RESUME, RETURN, TASKS
from agent_runtime.func import PREVIOUS
from agent_runtime.pregel import PULL_PATH as PULL
from agent_runtime.pregel import PUSH_PATH as PUSH
from agent_runtime.runtime import CONFIG_KEY_RUNTIME
from langgraph import _shim

__all__ = [
    "CONFIG_KEY_RUNTIME",
    "ERROR",
    "INTERRUPT",
    "NO_WRITES",
    "OVERWRITE",
    "PREVIOUS",
    "PULL",
    "PUSH",
    "RESUME",
    "RETURN",
    "TASKS",
]
__getattr__ = _shim.module_getattr(__name__)
