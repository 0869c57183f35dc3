"""`langgraph.pregel.debug` -> agent_runtime.engine.payloads (the "task" events of the debug stream)."""

from agent_runtime.engine.payloads import map_debug_tasks
from langgraph import _shim

__all__ = ["map_debug_tasks"]
__getattr__ = _shim.module_getattr(__name__)
