"""`langgraph.managed` -> agent_runtime.types."""

from agent_runtime.types import IsLastStep, RemainingSteps
from langgraph import _shim

__all__ = ["IsLastStep", "RemainingSteps"]
__getattr__ = _shim.module_getattr(__name__)
