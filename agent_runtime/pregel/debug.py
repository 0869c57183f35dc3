"""`langgraph.pregel.debug`: the payloads of the "debug" / "tasks" stream modes (agent_runtime.engine.payloads)."""

from agent_runtime.engine.payloads import map_debug_tasks

__all__ = ["map_debug_tasks"]
