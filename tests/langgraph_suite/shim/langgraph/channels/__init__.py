"""`langgraph.channels` -> agent_runtime.channels."""

from agent_runtime.channels import BaseChannel, BinaryOperatorAggregate, EphemeralValue, LastValue, Topic
from langgraph import _shim

__all__ = ["BaseChannel", "BinaryOperatorAggregate", "EphemeralValue", "LastValue", "Topic"]
__getattr__ = _shim.module_getattr(__name__)
