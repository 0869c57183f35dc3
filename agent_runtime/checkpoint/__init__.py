"""Checkpointers: where a thread's supersteps and pending writes are saved."""

from agent_runtime.checkpoint.base import BaseCheckpointer, Checkpoint, CheckpointTuple
from agent_runtime.checkpoint.memory import InMemoryCheckpointer, MemorySaver
from agent_runtime.checkpoint.redis import RedisCheckpointer
from agent_runtime.checkpoint.serde import DisallowedType, allow_types
from agent_runtime.checkpoint.sqlite import SqliteCheckpointer

__all__ = [
    "BaseCheckpointer",
    "Checkpoint",
    "CheckpointTuple",
    "DisallowedType",
    "InMemoryCheckpointer",
    "MemorySaver",
    "RedisCheckpointer",
    "SqliteCheckpointer",
    "allow_types",
]
