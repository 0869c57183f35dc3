"""Channels: the versioned values a compiled graph is made of (LangGraph's `langgraph.channels`)."""

from agent_runtime.channels.barrier import NamedBarrierValue, NamedBarrierValueAfterFinish
from agent_runtime.channels.base import MISSING, BaseChannel, EmptyChannelError
from agent_runtime.channels.delta import DeltaChannel, DeltaSnapshot
from agent_runtime.channels.ephemeral import EphemeralValue
from agent_runtime.channels.last_value import LastValue, LastValueAfterFinish
from agent_runtime.channels.reducer import BinaryOperatorAggregate, get_overwrite
from agent_runtime.channels.topic import Topic
from agent_runtime.channels.untracked import AnyValue, SendQueue, UntrackedValue

__all__ = [
    "MISSING",
    "AnyValue",
    "BaseChannel",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "DeltaSnapshot",
    "EmptyChannelError",
    "EphemeralValue",
    "LastValue",
    "LastValueAfterFinish",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "SendQueue",
    "Topic",
    "UntrackedValue",
    "get_overwrite",
]
