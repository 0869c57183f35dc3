"""`langgraph.managed`: state keys the runtime fills in (steps left before the recursion limit)."""

from agent_runtime.core.types import IsLastStep, RemainingSteps

__all__ = ["IsLastStep", "RemainingSteps"]
