"""`langgraph._internal._constants`: the config keys of the run's Runtime, of the task protocol
(agent_runtime.core.protocol), of a checkpoint namespace, of an error handler's NodeError, of strict resume
and of the node-finished hook, the overwrite marker, the reserved channels of pending writes and a task
path's kinds and the entrypoint's `previous` channel (the rest are stubs)."""

from agent_runtime.channels.reducer import OVERWRITE_KEY as OVERWRITE
from agent_runtime.checkpoint.base import NULL_TASK_ID
from agent_runtime.constants import CONF, CONFIG_KEY_CHECKPOINT_NS, ERROR, INTERRUPT, NO_WRITES, RESUME, RETURN, TASKS
from agent_runtime.constants import ERROR_SOURCE as ERROR_SOURCE_NODE
from agent_runtime.constants import NODE_FINISHED as CONFIG_KEY_NODE_FINISHED
from agent_runtime.core.protocol import (
    CONFIG_KEY_CALL,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_SEND,
    CONFIG_KEY_STREAM,
    CONFIG_KEY_TASK_ID,
    CONFIG_KEY_THREAD_ID,
    CONFIG_KEY_TIMED_ATTEMPT_OBSERVER,
    NS_END,
    NS_SEP,
)
from agent_runtime.engine.error_handlers import CONFIG_KEY_NODE_ERROR
from agent_runtime.engine.resume_values import STRICT_RESUME as CONFIG_KEY_STRICT_RESUME
from agent_runtime.func import PREVIOUS
from agent_runtime.pregel import PULL_PATH as PULL
from agent_runtime.pregel import PUSH_PATH as PUSH
from agent_runtime.runtime import CONFIG_KEY_RUNTIME
from langgraph import _shim

__all__ = [
    "CONF",
    "CONFIG_KEY_CALL",
    "CONFIG_KEY_CHECKPOINT_ID",
    "CONFIG_KEY_CHECKPOINT_NS",
    "CONFIG_KEY_NODE_ERROR",
    "CONFIG_KEY_NODE_FINISHED",
    "CONFIG_KEY_RUNTIME",
    "CONFIG_KEY_SEND",
    "CONFIG_KEY_STREAM",
    "CONFIG_KEY_STRICT_RESUME",
    "CONFIG_KEY_TASK_ID",
    "CONFIG_KEY_THREAD_ID",
    "CONFIG_KEY_TIMED_ATTEMPT_OBSERVER",
    "ERROR",
    "ERROR_SOURCE_NODE",
    "INTERRUPT",
    "NO_WRITES",
    "NS_END",
    "NS_SEP",
    "NULL_TASK_ID",
    "OVERWRITE",
    "PREVIOUS",
    "PULL",
    "PUSH",
    "RESUME",
    "RETURN",
    "TASKS",
]
__getattr__ = _shim.module_getattr(__name__)
