"""`langgraph.channels.binop` -> agent_runtime.channels."""

from agent_runtime.channels import BinaryOperatorAggregate
from langgraph import _shim

__all__ = ["BinaryOperatorAggregate"]
__getattr__ = _shim.module_getattr(__name__)
