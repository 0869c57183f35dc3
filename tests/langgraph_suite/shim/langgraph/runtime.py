"""`langgraph.runtime` -> agent_runtime.runtime."""

from agent_runtime.runtime import DEFAULT_RUNTIME, ExecutionInfo, RunControl, Runtime, ServerInfo, get_runtime
from langgraph import _shim

__all__ = ["DEFAULT_RUNTIME", "ExecutionInfo", "RunControl", "Runtime", "ServerInfo", "get_runtime"]
__getattr__ = _shim.module_getattr(__name__)
