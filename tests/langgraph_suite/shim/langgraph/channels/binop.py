"""`langgraph.channels.binop` -> agent_runtime.channels."""

from agent_runtime.channels import BinaryOperatorAggregate
from agent_runtime.channels import get_overwrite as _get_overwrite
from langgraph import _shim

__all__ = ["BinaryOperatorAggregate", "_get_overwrite"]
__getattr__ = _shim.module_getattr(__name__)
