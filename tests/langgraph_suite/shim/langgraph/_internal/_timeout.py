"""`langgraph._internal._timeout` -> agent_runtime's TimeoutPolicy.coerce and its sync-timeout error."""

from agent_runtime.engine.timeouts import sync_timeout_unsupported
from agent_runtime.types import TimeoutPolicy
from langgraph import _shim

coerce_timeout_policy = TimeoutPolicy.coerce

__all__ = ["coerce_timeout_policy", "sync_timeout_unsupported"]
__getattr__ = _shim.module_getattr(__name__)
