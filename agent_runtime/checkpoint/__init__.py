"""Checkpointers: where a thread's supersteps and pending writes are saved."""

from agent_runtime.checkpoint.base import BaseCheckpointer, Checkpoint, CheckpointTuple
from agent_runtime.checkpoint.memory import InMemoryCheckpointer, MemorySaver

__all__ = ["BaseCheckpointer", "Checkpoint", "CheckpointTuple", "InMemoryCheckpointer", "MemorySaver"]
