"""`langgraph.pregel._retry` -> agent_runtime.engine.executor (running a prepared task), .retries, .timeouts."""

from agent_runtime.engine.executor import arun_with_retry, ensure_execution_info, parent_namespace, run_with_retry
from agent_runtime.engine.retries import should_retry_on
from agent_runtime.engine.timeouts import TimedAttemptScope
from langgraph import _shim

_should_retry_on = should_retry_on
_checkpoint_ns_for_parent_command = parent_namespace
_ensure_execution_info = ensure_execution_info
_TimedAttemptScope = TimedAttemptScope

__all__ = [
    "_TimedAttemptScope",
    "_checkpoint_ns_for_parent_command",
    "_ensure_execution_info",
    "_should_retry_on",
    "arun_with_retry",
    "run_with_retry",
]
__getattr__ = _shim.module_getattr(__name__)
