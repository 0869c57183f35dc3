"""`langgraph.constants`: the graph's reserved node and channel names, config keys and tags."""

from agent_runtime.engine.spec import CONF, TASKS
from agent_runtime.streaming import TAG_HIDDEN, TAG_NOSTREAM
from agent_runtime.types import END, START

CONFIG_KEY_CHECKPOINTER = "__pregel_checkpointer"  # LangGraph's configurable key of a run's checkpointer

__all__ = [
    "CONF",
    "CONFIG_KEY_CHECKPOINTER",
    "END",
    "START",
    "TAG_HIDDEN",
    "TAG_NOSTREAM",
    "TASKS",
]
