"""`langgraph.channels` -> agent_runtime.channels."""

from agent_runtime.channels import (
    AnyValue,
    BaseChannel,
    BinaryOperatorAggregate,
    DeltaChannel,
    EphemeralValue,
    LastValue,
    NamedBarrierValue,
    Topic,
    UntrackedValue,
)
from langgraph import _shim

__all__ = [
    "AnyValue",
    "BaseChannel",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "EphemeralValue",
    "LastValue",
    "NamedBarrierValue",
    "Topic",
    "UntrackedValue",
]
__getattr__ = _shim.module_getattr(__name__)
