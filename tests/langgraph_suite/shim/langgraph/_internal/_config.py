"""`langgraph._internal._config`: the default recursion limit (agent_runtime's; the rest are stubs)."""

from agent_runtime.pregel import DEFAULT_RECURSION_LIMIT
from langgraph import _shim

__all__ = ["DEFAULT_RECURSION_LIMIT"]
__getattr__ = _shim.module_getattr(__name__)
