"""`langgraph.channels.last_value` -> agent_runtime.channels."""

from agent_runtime.channels import LastValue, LastValueAfterFinish
from langgraph import _shim

__all__ = ["LastValue", "LastValueAfterFinish"]
__getattr__ = _shim.module_getattr(__name__)
