"""`langgraph.managed.is_last_step`: the managed values and the marker of `RemainingSteps`."""

from agent_runtime.core.types import IsLastStep, RemainingStepsManager

__all__ = ["IsLastStep", "RemainingStepsManager"]
