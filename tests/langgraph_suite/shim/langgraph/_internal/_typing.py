"""`langgraph._internal._typing`: the absence sentinel of channels (agent_runtime's MISSING)."""

from agent_runtime.channels import MISSING
from langgraph import _shim

__all__ = ["MISSING"]
__getattr__ = _shim.module_getattr(__name__)
