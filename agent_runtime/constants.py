"""`langgraph.constants`: the graph's reserved node and channel names, config keys and tags. Defined here,
at the bottom layer, because every layer above names them (checkpoints, the engine, streams)."""

import sys

from agent_runtime.core.types import END, START

TASKS = "__pregel_tasks"
PUSH_TRIGGER = "__pregel_push"
INTERRUPT = "__interrupt__"
RESUME = "__resume__"
ERROR = "__error__"
ERROR_SOURCE = "__error_source_node__"  # with ERROR: the error went to the node's error handler
NO_WRITES = "__no_writes__"
RETURN = "__return__"  # a task call's result, saved as its pending write
NODE_FINISHED = "__pregel_node_finished"  # configurable key: called with each node's name as it finishes
RESERVED = frozenset({NO_WRITES, PUSH_TRIGGER, RESUME, INTERRUPT, RETURN, ERROR, ERROR_SOURCE})
CONF = "configurable"
CONFIG_KEY_CHECKPOINT_NS = "checkpoint_ns"  # "<node>:<task id>|..." down to a subgraph
CONFIG_KEY_CHECKPOINTER = "__pregel_checkpointer"  # LangGraph's configurable key of a run's checkpointer

TAG_NOSTREAM = sys.intern("nostream")  # a chat model or tool tagged with it is not streamed
TAG_HIDDEN = sys.intern("langsmith:hidden")  # a run tagged with it is not a node's output

__all__ = [
    "CONF",
    "CONFIG_KEY_CHECKPOINTER",
    "END",
    "START",
    "TAG_HIDDEN",
    "TAG_NOSTREAM",
    "TASKS",
]
