"""`langgraph.pregel`: the compiled graph (agent_runtime.pregel.compiled) and the low-level graph API
(`Pregel`, `NodeBuilder`: agent_runtime.pregel.main)."""

from agent_runtime.pregel.compiled import PULL_PATH, PUSH_PATH, CompiledGraph, OutputKeys, select_output
from agent_runtime.pregel.main import NodeBuilder, Pregel

__all__ = ["PULL_PATH", "PUSH_PATH", "CompiledGraph", "NodeBuilder", "OutputKeys", "Pregel", "select_output"]
