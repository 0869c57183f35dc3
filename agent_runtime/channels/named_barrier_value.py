"""`langgraph.channels.named_barrier_value` (agent_runtime.channels.barrier)."""

from agent_runtime.channels.barrier import NamedBarrierValue, NamedBarrierValueAfterFinish

__all__ = ["NamedBarrierValue", "NamedBarrierValueAfterFinish"]
