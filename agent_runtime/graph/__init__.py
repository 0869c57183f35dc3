"""`langgraph.graph`: the graph builder (agent_runtime.graph.state) and the messages state
(agent_runtime.graph.message, loaded with langchain-core only when asked for)."""

from typing import Any

from agent_runtime.core.types import END, START
from agent_runtime.graph.state import StateGraph


def __getattr__(name: str) -> Any:
    """`MessagesState`, `add_messages`, `MessageGraph` load langchain-core only when asked for."""
    if name in ("MessagesState", "add_messages", "MessageGraph"):
        from agent_runtime.graph import message

        return getattr(message, name)
    raise AttributeError(f"module 'agent_runtime.graph' has no attribute {name!r}")


__all__ = ["END", "START", "MessageGraph", "MessagesState", "StateGraph", "add_messages"]
