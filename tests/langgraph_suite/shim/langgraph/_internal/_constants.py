"""`langgraph._internal._constants`: the config key of the run's Runtime, the overwrite marker and the
reserved channels of pending writes (the rest are stubs)."""

from agent_runtime.channels.reducer import OVERWRITE_KEY as OVERWRITE
from agent_runtime.checkpoint.base import NULL_TASK_ID
from agent_runtime.engine.resume import STRICT_RESUME as CONFIG_KEY_STRICT_RESUME
from agent_runtime.engine.spec import ERROR, INTERRUPT, NO_WRITES, RESUME, RETURN
from agent_runtime.engine.spec import NODE_FINISHED as CONFIG_KEY_NODE_FINISHED
from agent_runtime.pregel import PULL_PATH as PULL
from agent_runtime.pregel import PUSH_PATH as PUSH
from agent_runtime.runtime import CONFIG_KEY_RUNTIME
from langgraph import _shim

__all__ = [
    "CONFIG_KEY_NODE_FINISHED",
    "CONFIG_KEY_RUNTIME",
    "CONFIG_KEY_STRICT_RESUME",
    "ERROR",
    "INTERRUPT",
    "NO_WRITES",
    "NULL_TASK_ID",
    "OVERWRITE",
    "PULL",
    "PUSH",
    "RESUME",
    "RETURN",
]
__getattr__ = _shim.module_getattr(__name__)
