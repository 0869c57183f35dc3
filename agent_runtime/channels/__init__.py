"""Channels: the versioned values a compiled graph is made of."""

from agent_runtime.channels.barrier import NamedBarrierValue, NamedBarrierValueAfterFinish
from agent_runtime.channels.base import MISSING, BaseChannel, EmptyChannelError
from agent_runtime.channels.ephemeral import EphemeralValue
from agent_runtime.channels.last_value import LastValue, LastValueAfterFinish
from agent_runtime.channels.reducer import BinaryOperatorAggregate
from agent_runtime.channels.topic import Topic

__all__ = [
    "MISSING",
    "BaseChannel",
    "BinaryOperatorAggregate",
    "EmptyChannelError",
    "EphemeralValue",
    "LastValue",
    "LastValueAfterFinish",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "Topic",
]
